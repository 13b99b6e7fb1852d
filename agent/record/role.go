package record

import "strings"

// Role is what a stored snapshot was taken for, as its label says: the one place the labels
// "before-<trigger>" and "after-<trigger>" are written and read.
type Role uint8

// The roles of snapshots.
const (
	// RolePeriodic: taken on a schedule (no label).
	RolePeriodic Role = iota
	// RoleBefore: kept by the agent from just before a rise of the heap ("before-<trigger>").
	RoleBefore
	// RoleAfter: taken by the agent once the rise stopped ("after-<trigger>").
	RoleAfter
	// RoleOther: any other label.
	RoleOther
)

var rolePrefix = [...]string{RoleBefore: "before-", RoleAfter: "after-"}

// RoleOf reads a snapshot's role from its label.
func RoleOf(label string) Role {
	switch {
	case label == "":
		return RolePeriodic
	case strings.HasPrefix(label, rolePrefix[RoleBefore]):
		return RoleBefore
	case strings.HasPrefix(label, rolePrefix[RoleAfter]):
		return RoleAfter
	}
	return RoleOther
}

// Label is the label of a snapshot taken in role r around trigger ("" for a periodic one,
// the trigger itself for RoleOther).
func (r Role) Label(trigger string) string {
	switch r {
	case RolePeriodic:
		return ""
	case RoleBefore, RoleAfter:
		return rolePrefix[r] + trigger
	}
	return trigger
}
