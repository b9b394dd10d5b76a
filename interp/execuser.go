package interp

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
)

// ExecUser is the user exec programs run as (Options.ExecUser): its ids
// and supplementary groups, looked up once when the engine is made.
type ExecUser struct {
	Name   string
	UID    uint32
	GID    uint32
	Groups []uint32
}

// LookupExecUser finds the user name (a login name or a numeric uid) that
// exec programs are to run as. Running a program as another user needs
// root: it is an error for any other process, unless name is the process's
// own user.
func LookupExecUser(name string) (*ExecUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, nerr := strconv.Atoi(name); nerr != nil {
			return nil, fmt.Errorf("no user %q on this host", name)
		}
		if u, err = user.LookupId(name); err != nil {
			return nil, fmt.Errorf("no user with uid %s on this host", name)
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q: uid %q is not a number", name, u.Uid)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q: gid %q is not a number", name, u.Gid)
	}
	x := &ExecUser{Name: u.Username, UID: uint32(uid), GID: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil && uint32(n) != x.GID {
				x.Groups = append(x.Groups, uint32(n))
			}
		}
	}
	if euid := os.Geteuid(); euid != 0 && uint32(euid) != x.UID {
		return nil, fmt.Errorf("running programs as %s needs root; this process runs as uid %d", x.Name, euid)
	}
	return x, nil
}
