//go:build !linux

package confine

func nonDumpable() {}

func blank(string) {}

func blankEnv(string) {}
