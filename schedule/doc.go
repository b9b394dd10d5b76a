// Package schedule is the time of flowrun's schedules: it parses and
// validates a schedule's spec (a five-field cron expression or a
// descriptor such as @daily, or an every interval, with an IANA time
// zone), computes its slots (the instants it fires at) with the DST rules
// of spec/semantics.md, decides what a scheduler does with the slots that
// came due while nobody fired them (catch-up), and draws a slot's jitter.
//
// It is pure: it must not read the wall clock (every function takes the
// times it needs), must not import lang, interp or store, and must not do
// I/O beyond loading time zones from the database embedded with
// time/tzdata, so a machine without zoneinfo files gives the same answers.
package schedule

import _ "time/tzdata" // the IANA database, for machines without zoneinfo
