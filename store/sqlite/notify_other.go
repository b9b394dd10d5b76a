//go:build !linux

package sqlite

import "errors"

// watchLog has no implementation off Linux: WaitForWork reports it and
// workers poll.
func watchLog(path string) (*logWatcher, error) {
	return nil, errors.New("watching the database for commits needs Linux (inotify); workers poll instead")
}
