package session

import "testing"

func TestRoles(t *testing.T) {
	for _, r := range []Role{RolePeriodic, RoleBefore, RoleAfter} {
		label := r.Label("heap-jump")
		if got := RoleOf(label); got != r {
			t.Errorf("role %d: label %q reads as %d", r, label, got)
		}
		if err := CheckLabel(label); err != nil {
			t.Errorf("role %d: %v", r, err)
		}
	}
	if got := RoleOf("manual"); got != RoleOther {
		t.Errorf("an unknown label reads as %d, want RoleOther", got)
	}
}
