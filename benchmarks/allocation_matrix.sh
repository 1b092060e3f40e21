#!/usr/bin/env bash
# Run benchmarks/allocation_bench.py against this project and against the
# upstream bare metal service (ironic, all-in-one, fake-hardware) on each
# database, one server at a time, and print a table of both sides.
#
#   benchmarks/allocation_matrix.sh            # the default matrix
#   benchmarks/allocation_matrix.sh "ours mysql 2 1000 1,16 90"   # one step
#
# A step is one of:
#   ours KIND WORKERS NODES CLIENTS [DURATION]
#   ours_placement KIND WORKERS NODES CLIENTS [DURATION]
#   upstream KIND NODES CLIENTS [DURATION]
# KIND is mysql, postgresql or sqlite; CLIENTS a comma separated list.
# WORKERS is the number of alloc-server processes ([DEFAULT]server_workers),
# optionally followed by x and the API threads of each ([api]api_workers,
# default 2): "3x1" is three processes of one API thread each; "default"
# writes none of these options nor [conductor]workers_pool_size (the
# configuration a deployer gets without tuning: one process per CPU, at
# most four, on mysql and postgresql, one on sqlite). ours_placement is ours
# with [allocation]backend = placement (the server's in-process
# Placement, on the same database) instead of the database backend.
#
# Environment:
#   ALLOC_BIN     directory with alloc-server and alloc-manage
#                 (default: the one of the python running this script)
#   IRONIC_VENV   virtualenv with ironic installed (default /tmp/ironic-venv;
#                 see benchmarks/README.md); upstream steps are skipped
#                 without it
#   OURS_PORT, UPSTREAM_PORT  ports of the two servers (6385, 6386)
#   PLACEMENT_PORT  port of the Placement API our server also serves
#                 ([placement_api]port, default 8778)
#   OURS_DB, UPSTREAM_DB  their databases (alloc_bench, ironic_bench)
#   OUT           directory for configs, logs and results (default
#                 /tmp/alloc-matrix)
#   MYSQL_URL_HOST, PG_URL_HOST  database servers (default 127.0.0.1,
#                 root / postgres users without password)
#
# Every step drops and re-creates its database ($OURS_DB or
# $UPSTREAM_DB): never point it at a database you care about.
set -u
here=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
ALLOC_BIN=${ALLOC_BIN:-$(dirname "$(command -v alloc-server || echo /nonexistent/x)")}
IRONIC_VENV=${IRONIC_VENV:-/tmp/ironic-venv}
OUT=${OUT:-/tmp/alloc-matrix}
MYSQL_HOST=${MYSQL_URL_HOST:-127.0.0.1}
PG_HOST=${PG_URL_HOST:-127.0.0.1}
OURS_PORT=${OURS_PORT:-6385}
PLACEMENT_PORT=${PLACEMENT_PORT:-8778}
UPSTREAM_PORT=${UPSTREAM_PORT:-6386}
OURS_DB=${OURS_DB:-alloc_bench}
UPSTREAM_DB=${UPSTREAM_DB:-ironic_bench}
mkdir -p "$OUT"

log() { echo "$(date +%H:%M:%S) $*" | tee -a "$OUT/progress.log"; }

wait_up() {
    for _ in $(seq 1 180); do
        curl -sf -o /dev/null "http://127.0.0.1:$1/" && return 0
        sleep 1
    done
    log "no server answered on port $1"
    return 1
}

stop_servers() {
    pkill -f "alloc-server --config-file $OUT/" 2>/dev/null
    pkill -f "ironic --config-file $OUT/" 2>/dev/null
    sleep 4
    pkill -9 -f "alloc-server --config-file $OUT/" 2>/dev/null
    pkill -9 -f "ironic --config-file $OUT/" 2>/dev/null
    sleep 1
}

db_url() {  # KIND NAME
    case $1 in
        mysql) echo "mysql+pymysql://root@$MYSQL_HOST/$2?charset=utf8mb4" ;;
        postgresql) echo "postgresql+psycopg2://postgres@$PG_HOST/$2" ;;
        sqlite) echo "sqlite:///$OUT/$2.sqlite" ;;
    esac
}

fresh_db() {  # KIND NAME
    case $1 in
        mysql) mysql -uroot -h"$MYSQL_HOST" -e \
            "DROP DATABASE IF EXISTS $2; CREATE DATABASE $2" ;;
        postgresql)
            psql -h "$PG_HOST" -U postgres -d postgres -qc "DROP DATABASE IF EXISTS $2"
            psql -h "$PG_HOST" -U postgres -d postgres -qc "CREATE DATABASE $2" ;;
        sqlite) rm -f "$OUT/$2.sqlite"* ;;
    esac
}

# Run after enrolling, before the allocations are timed: PostgreSQL's
# ANALYZE of the service's database. A PostgreSQL with its defaults has
# autovacuum analyze the tables the enrolment filled; a server run with
# autovacuum off (as some test machines are) keeps the statistics of the
# empty schema, and its planner then reads every inventory of the class
# for each provider checked (about a second a candidates query at 400
# nodes, against a few milliseconds). MariaDB's InnoDB recalculates its
# statistics itself; SQLite's plans are made without any.
analyze_cmd() {  # KIND NAME
    case $1 in
        postgresql) echo "psql -h $PG_HOST -U postgres -d $2 -qc ANALYZE" ;;
    esac
}

bench() {  # TAG PORT NODES CLIENTS DURATION EXTRA...
    local tag=$1 port=$2 nodes=$3 clients=$4 duration=$5
    shift 5
    log "start $tag"
    $PY "$here/allocation_bench.py" --url "http://127.0.0.1:$port" \
        -n "$nodes" -c "$clients" ${duration:+--duration "$duration"} \
        --json "$@" > "$OUT/$tag.out" 2>&1
    log "done $tag (exit $?)"
}

ours() {  # KIND WORKERS NODES CLIENTS [DURATION] [BACKEND]
    local kind=$1 workers=${2%x*} nodes=$3 clients=$4 duration=${5:-}
    local backend=${6:-database} threads=2 tag
    local processes="" api_threads="" pool=""
    case $backend in
        database) tag="ours-$kind-w$2-n$nodes" ;;
        *) tag="ours$backend-$kind-w$2-n$nodes" ;;
    esac
    case $2 in *x*) threads=${2#*x} ;; esac
    if [ "$2" != default ]; then
        processes="server_workers = $workers"
        api_threads="api_workers = $threads"
        pool="workers_pool_size = 32"
    fi
    stop_servers
    fresh_db "$kind" "$OURS_DB"
    local analyze
    analyze=$(analyze_cmd "$kind" "$OURS_DB")
    cat > "$OUT/ours-$kind.conf" <<CONF
[DEFAULT]
host = bench
state_path = $OUT/state
$processes
[api]
port = $OURS_PORT
$api_threads
[placement_api]
port = $PLACEMENT_PORT
[conductor]
$pool
[database]
connection = $(db_url "$kind" "$OURS_DB")
[allocation]
backend = $backend
CONF
    if [ "$kind" != sqlite ]; then
        "$ALLOC_BIN/alloc-manage" --config-file "$OUT/ours-$kind.conf" \
            db sync > "$OUT/dbsync-$tag.log" 2>&1
    fi
    (cd "$OUT" && "$ALLOC_BIN/alloc-server" --config-file "$OUT/ours-$kind.conf" \
        > "$OUT/server-$tag.log" 2>&1 &)
    wait_up $OURS_PORT && bench "$tag" $OURS_PORT "$nodes" "$clients" "$duration" \
        ${analyze:+--after-enroll "$analyze"}
}

ours_placement() {  # KIND WORKERS NODES CLIENTS [DURATION]
    ours "$1" "$2" "$3" "$4" "${5:-}" placement
}

upstream() {  # KIND NODES CLIENTS [DURATION]
    local kind=$1 nodes=$2 clients=$3 duration=${4:-}
    local tag="upstream-$kind-n$nodes"
    if [ ! -x "$IRONIC_VENV/bin/ironic" ]; then
        log "skip $tag: no ironic in $IRONIC_VENV"
        return
    fi
    stop_servers
    fresh_db "$kind" "$UPSTREAM_DB"
    cat > "$OUT/ironic-$kind.conf" <<CONF
[DEFAULT]
auth_strategy = noauth
enabled_hardware_types = fake-hardware
enabled_power_interfaces = fake
enabled_management_interfaces = fake
enabled_deploy_interfaces = fake
enabled_boot_interfaces = fake
enabled_inspect_interfaces = no-inspect
enabled_network_interfaces = noop
enabled_bios_interfaces = no-bios
enabled_console_interfaces = no-console
enabled_raid_interfaces = no-raid
enabled_rescue_interfaces = no-rescue
enabled_vendor_interfaces = no-vendor
rpc_transport = none
host = bench
[conductor]
automated_clean = false
[database]
connection = $(db_url "$kind" "$UPSTREAM_DB")
[dhcp]
dhcp_provider = none
[api]
port = $UPSTREAM_PORT
CONF
    "$IRONIC_VENV/bin/ironic-dbsync" --config-file "$OUT/ironic-$kind.conf" \
        create_schema > "$OUT/dbsync-$tag.log" 2>&1
    (cd "$OUT" && "$IRONIC_VENV/bin/ironic" --config-file "$OUT/ironic-$kind.conf" \
        > "$OUT/server-$tag.log" 2>&1 &)
    # Fewer enrolling clients: upstream resets connections under 16.
    local analyze
    analyze=$(analyze_cmd "$kind" "$UPSTREAM_DB")
    wait_up $UPSTREAM_PORT && bench "$tag" $UPSTREAM_PORT "$nodes" \
        "$clients" "$duration" --enroll-workers 4 --timeout 120 \
        ${analyze:+--after-enroll "$analyze"}
}

if [ $# -eq 0 ]; then
    set -- \
        "ours mysql 1 1000 1,16 90" "ours mysql 2 1000 1,16 90" \
        "ours mysql 3x1 1000 1,16 90" "upstream mysql 1000 1,16 90" \
        "ours mysql 2 10000 1,16 90" \
        "ours postgresql 1 1000 1,16 90" "ours postgresql 2 1000 16 90" \
        "upstream postgresql 1000 1,16 60" "ours postgresql 2 10000 16 90" \
        "ours sqlite 1 1000 1,16 90" "upstream sqlite 1000 1,16 60" \
        "ours sqlite 1 10000 16 90"
fi
for step in "$@"; do
    eval "$step"
done
stop_servers

# The table: one row per server, database, N and C; ours against upstream
# (same database, N and C) in the last column.
$PY - "$OUT" <<'PY'
import glob, json, os, sys
rows = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], '*.out'))):
    text = open(path).read()
    start = text.rfind('\n[')
    if start < 0:
        print('%s: no result (see the file)' % os.path.basename(path))
        continue
    for s in json.loads(text[start:]):
        rows.append((os.path.basename(path)[:-4], s))

def kind(tag):  # ours-mysql-w2-n1000 / upstream-mysql-n1000 -> mysql
    return tag.split('-')[1]


upstream = {(kind(tag), s['nodes'], s['clients']): s['allocations_per_second']
            for tag, s in rows if tag.startswith('upstream-')}
print('| run | N | C | allocations/s | POST->active p50 | p99 | errors '
      '| x upstream | machine reference |')
print('|---|---|---|---|---|---|---|---|---|')
for tag, s in rows:
    base = upstream.get((kind(tag), s['nodes'], s['clients']))
    ratio = ('%.1f' % (s['allocations_per_second'] / base)
             if base and not tag.startswith('upstream-') else '')
    reference = s.get('python_loop_seconds')
    print('| %s | %d | %d | %.1f | %.0f ms | %.0f ms | %d | %s | %s |' % (
        tag, s['nodes'], s['clients'], s['allocations_per_second'],
        s['latency_p50_ms'], s['latency_p99_ms'], sum(s['errors'].values()),
        ratio, '%.3f s' % reference if reference else ''))
PY
