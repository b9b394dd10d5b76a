// Package docfetch fetches the OpenAPI documents that workflows name by
// URL (language.md §8.10) for the programs that compile them: the command
// line and the language server give its fetcher to the loader
// (lang.LoadOptions.FetchDocument), because package lang opens no network
// connection of its own.
//
// A fetch is one GET of an http or https URL, bounded in time (Timeout),
// in redirects (MaxRedirects, each to http or https) and in size (the
// limit the loader passes, read no further); it sends no cookie and no
// credential. Its errors say why in words that follow "fetching URL
// failed: " (the server's status, a timeout, too many redirects), without
// repeating the URL.
//
// docfetch must not keep a document beyond a Cache's life, must not start
// a goroutine that outlives a fetch (net/http's own connections aside),
// and must not read the wall clock but through the clock a Cache is given.
package docfetch
