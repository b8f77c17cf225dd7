# scripts/lib/common.sh - helpers shared by scripts/run and scripts/bench.

# free_port: prints a TCP port on 127.0.0.1 that nothing listens on now. It
# picks below Linux's ephemeral range (32768-60999 by default): a port in
# that range may be the local end of some client connection (wrk opens
# hundreds), and a server can't bind it then even though nothing listens.
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((12000 + RANDOM % 20000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# wait_port PORT [SECONDS]: waits until something accepts on 127.0.0.1:PORT.
wait_port() {
  local deadline=$((SECONDS + ${2:-10}))
  while ((SECONDS < deadline)); do
    (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "nothing listens on 127.0.0.1:$1" >&2
  return 1
}

# nginx_conf TEMPLATE OUT VAR KEY=VALUE...: fills @KEY@ placeholders.
fill_template() {
  local tpl=$1 out=$2
  shift 2
  local sedargs=()
  for kv in "$@"; do sedargs+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
  sed "${sedargs[@]}" "$tpl" >"$out"
}
