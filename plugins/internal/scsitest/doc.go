// Package scsitest holds the test doubles of the FC and iSCSI plugins,
// faithful to what the kubelet's FC and iSCSI code reads and runs: a fake sysfs and /dev tree
// built per test (Fake), real loop devices behind its disks (Loop), and
// fake iscsiadm and multipath commands. The fakes are the test binary
// itself, re-executed through symlinks named iscsiadm and multipath in the
// tree's bin directory: a test package calls Main from its TestMain. They
// record their arguments, follow a rules file for exit codes, and create
// or remove sessions, links and devices as the real commands would. Only
// tests import it.
package scsitest
