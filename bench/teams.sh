#!/bin/sh
# Team mailbox: delivery latency (post → the waiting reader has the message; median, p99 over 1 000
# messages) and the CPU a reader uses while it waits with no mail (file watch, no polling).
set -e
cd "$(dirname "$0")/.."
exec cargo bench -p lathe-core --bench team_mailbox "$@"
