#!/bin/sh
# wrap.sh CAPTURE PIDFILE PROGRAM [ARG ...]: runs PROGRAM with everything
# it reads on stdin also appended to CAPTURE (what the client sent), and
# its process id in PIDFILE (to kill it mid-call).
capture=$1
pidfile=$2
shift 2
# An asynchronous list reads /dev/null unless told otherwise.
exec 3<&0
tee -a "$capture" <&3 | "$@" &
echo $! > "$pidfile"
# Only PROGRAM holds the client's stdout: when it dies, the client reads
# the end of its output at once, as from a server that died on its own
# (the shell and `tee` are left to the client's kill of the group).
exec 0<&- 1>&- 3<&-
wait $!
