// Package deploy holds the files that install podhost as a node daemon:
// podhost.service (the systemd unit) and install.sh. It has no Go code and
// nothing imports it; its tests check the unit's settings that keep pods
// alive across host restarts and run the installer into a staging
// directory.
package deploy
