// Package confine keeps a flowrun process's secrets out of reach of the
// programs it starts (spec/security.md §9). Process, called first thing in
// main, marks the process non-dumpable, so that /proc/PID/environ, mem,
// maps and the like of the flowrun process can be read by no process of
// the same user without CAP_SYS_PTRACE (which exec programs started by
// root lose: see interp's startLocked), and overwrites the password of a
// Postgres --db or FLOWRUN_DB in the memory /proc/PID/cmdline and
// /proc/PID/environ show, having kept a copy for the process itself.
//
// confine must not parse flags or read any other setting: it only finds
// the --db value the way the CLI's flag parsing would accept it, and
// leaves the parsing to package cli.
package confine
