#!/bin/sh
# /init of the kernel-Binder VM (busybox sh, PID 1). Loads binder_linux, starts rsbinder's
# service manager and runs binder-channel-v1 scenarios between processes of different UIDs.
# Every result line starts with "BINDER-VM:"; run.sh on the host reads them off the serial
# console. The machine powers off at the end whatever happens.

export PATH=/bin
PEER=/bin/binder_channel_peer
PROVIDER_UID=1000
CLIENT_UID=2000
INTRUDER_UID=3000
MESSAGES=${MESSAGES:-10000}
WAIT_SECONDS=120

passed=0
failed=0

say() { echo "BINDER-VM: $*"; }
pass() { passed=$((passed + 1)); say "PASS $*"; }
fail() { failed=$((failed + 1)); say "FAIL $*"; }

finish() {
    say "RESULT $passed passed, $failed failed"
    sync
    poweroff -f
}

# wait_for FILE PATTERN: wait until a line of FILE matches PATTERN (grep -E), at most
# WAIT_SECONDS; prints the line.
wait_for() {
    i=0
    while [ "$i" -lt $((WAIT_SECONDS * 10)) ]; do
        line=$(grep -E -m1 "$2" "$1" 2>/dev/null)
        if [ -n "$line" ]; then
            echo "$line"
            return 0
        fi
        usleep 100000
        i=$((i + 1))
    done
    return 1
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
say "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) cpu(s)"

# ---- Binder ----
if insmod /lib/modules/binder_linux.ko devices=binder,hwbinder,vndbinder; then
    pass "insmod binder_linux devices=binder,hwbinder,vndbinder"
else
    fail "insmod binder_linux"
    finish
fi
mkdir -p /dev/binderfs
for dev in binder hwbinder vndbinder; do
    if [ -c "/dev/$dev" ]; then
        ln -sf "/dev/$dev" "/dev/binderfs/$dev"
        chmod 0666 "/dev/$dev"
    else
        fail "/dev/$dev missing"
    fi
done
[ -c /dev/binder ] || finish
pass "/dev/binderfs/binder -> /dev/binder"

/bin/rsb_hub --insecure-allow-all > /tmp/hub.log 2>&1 &
HUB=$!
usleep 300000
if kill -0 "$HUB" 2>/dev/null; then
    pass "rsb_hub service manager running (pid $HUB)"
else
    fail "rsb_hub exited: $(cat /tmp/hub.log)"
    finish
fi

# ---- provider ----
# The provider registers with rsb_hub; until the hub holds handle 0 that fails, so retry.
start_provider() {
    attempt=0
    while [ "$attempt" -lt 20 ]; do
        $PEER as-uid $PROVIDER_UID provide binder://mcp > /tmp/provider.log 2>&1 &
        PROVIDER=$!
        wait_for /tmp/provider.log '^READY|^RESULT' > /dev/null
        grep -q '^READY' /tmp/provider.log && return 0
        usleep 500000
        attempt=$((attempt + 1))
    done
    return 1
}
if start_provider; then
    pass "provider serves IMcpService as uid $PROVIDER_UID"
else
    fail "provider did not start: $(cat /tmp/provider.log)"
    finish
fi

# 1. open + flow-controlled streaming each way + close, across UIDs.
start=$(date +%s)
$PEER as-uid $CLIENT_UID stream binder://mcp --count "$MESSAGES" --expect-uid $PROVIDER_UID > /tmp/stream.log 2>&1
status=$?
result=$(grep '^RESULT' /tmp/stream.log)
if [ "$status" -eq 0 ] && echo "$result" | grep -q "^RESULT ok sent=$MESSAGES received=$MESSAGES .*my_uid_seen_by_provider=$CLIENT_UID .*close=local"; then
    pass "stream: $MESSAGES messages each way between uid $CLIENT_UID and uid $PROVIDER_UID in $(($(date +%s) - start)) s ($result)"
else
    fail "stream: status $status: $(cat /tmp/stream.log)"
fi
if line=$(wait_for /tmp/provider.log "^CLOSED .* uid=$CLIENT_UID") && echo "$line" | grep -q '^CLOSED remote'; then
    pass "close: the provider saw the client's close ($line)"
else
    fail "close: provider log: $(cat /tmp/provider.log)"
fi

# 1b. CH-47: three channels stream into the same provider process at once; its async Binder
# buffer is shared by all of them, and none may fail.
CONCURRENT=${CONCURRENT:-3000}
for i in 1 2 3; do
    $PEER as-uid $CLIENT_UID stream binder://mcp --count "$CONCURRENT" --expect-uid $PROVIDER_UID > "/tmp/concurrent$i.log" 2>&1 &
    eval "C$i=\$!"
done
ok=0
for i in 1 2 3; do
    eval "pid=\$C$i"
    if wait "$pid" && grep -q "^RESULT ok sent=$CONCURRENT received=$CONCURRENT .*close=local" "/tmp/concurrent$i.log"; then
        ok=$((ok + 1))
    else
        say "concurrent client $i: $(cat /tmp/concurrent$i.log)"
    fi
done
i=0
while [ "$i" -lt $((WAIT_SECONDS * 10)) ] && [ "$(grep -c "^CLOSED remote uid=$CLIENT_UID" /tmp/provider.log)" -lt 4 ]; do
    usleep 100000
    i=$((i + 1))
done
closed=$(grep -c "^CLOSED remote uid=$CLIENT_UID" /tmp/provider.log)
if [ "$ok" -eq 3 ] && [ "$closed" -eq 4 ]; then
    pass "3 concurrent channels, $CONCURRENT messages each way each, all closed cleanly (CH-47)"
else
    fail "3 concurrent channels: $ok of 3 completed, provider closes: $(grep '^CLOSED' /tmp/provider.log)"
fi

# 2. A second process with another UID calls send on the same channel: violation (CH-08).
$PEER as-uid $CLIENT_UID leak binder://mcp leaked_end --expect-uid $PROVIDER_UID > /tmp/leak.log 2>&1 &
LEAK=$!
if wait_for /tmp/leak.log '^LEAKED|^RESULT' > /dev/null && grep -q '^LEAKED' /tmp/leak.log; then
    $PEER as-uid $INTRUDER_UID intrude leaked_end > /tmp/intrude.log 2>&1
    if line=$(wait_for /tmp/provider.log "^CLOSED violation uid=$CLIENT_UID") &&
        echo "$line" | grep -q "WrongUid { expected: $CLIENT_UID, actual: $INTRUDER_UID }"; then
        pass "uid mismatch: a call from uid $INTRUDER_UID closed uid $CLIENT_UID's channel ($line)"
    else
        fail "uid mismatch: provider: $(cat /tmp/provider.log) intruder: $(cat /tmp/intrude.log)"
    fi
    if wait_for /tmp/leak.log '^RESULT' > /dev/null && grep -q '^RESULT ok close=remote' /tmp/leak.log; then
        pass "uid mismatch: the bound client was told (close remote)"
    else
        fail "uid mismatch: client: $(cat /tmp/leak.log)"
    fi
else
    fail "uid mismatch: could not leak the channel: $(cat /tmp/leak.log)"
fi
kill -9 "$LEAK" 2>/dev/null

# 3. The client dies: the provider's channel closes as peer_died (CH-42).
before=$(grep -c '^CLOSED peer_died' /tmp/provider.log)
$PEER as-uid $CLIENT_UID hang binder://mcp --expect-uid $PROVIDER_UID > /tmp/hang.log 2>&1 &
HANG=$!
if wait_for /tmp/hang.log '^READY|^RESULT' > /dev/null && grep -q '^READY' /tmp/hang.log; then
    kill -9 "$HANG"
    i=0
    while [ "$i" -lt $((WAIT_SECONDS * 10)) ] && [ "$(grep -c '^CLOSED peer_died' /tmp/provider.log)" -le "$before" ]; do
        usleep 100000
        i=$((i + 1))
    done
    if [ "$(grep -c '^CLOSED peer_died' /tmp/provider.log)" -gt "$before" ]; then
        pass "peer death: killed client -> provider closed peer_died"
    else
        fail "peer death (client): provider: $(cat /tmp/provider.log)"
    fi
else
    fail "peer death (client): client did not open: $(cat /tmp/hang.log)"
fi

# 5 (run before 4, which kills the MCP provider). One ACI call round over kernel Binder:
# the sample provider as uid 1000, the controller as uid 2000 (issue 7): getCapabilities, a
# sync call, a callAsync with progress through IACICallback, and a permission denial.
aci_round() {
    mkdir -p /tmp/aci-data
    chown 1000:1000 /tmp/aci-data
    attempt=0
    while [ "$attempt" -lt 10 ]; do
        su -s /bin/sh provider -c "exec /bin/aci-provider --kernel --data /tmp/aci-data --registry /etc/aci-provider-registry.json" > /tmp/aci-provider.log 2>&1 &
        ACI_PROVIDER=$!
        wait_for /tmp/aci-provider.log 'aci-provider ready|aci-provider: ' > /dev/null
        grep -q 'aci-provider ready' /tmp/aci-provider.log && break
        kill -9 "$ACI_PROVIDER" 2>/dev/null
        usleep 500000
        attempt=$((attempt + 1))
    done
    if ! grep -q 'aci-provider ready' /tmp/aci-provider.log; then
        fail "aci: provider did not start: $(cat /tmp/aci-provider.log)"
        return
    fi
    pass "aci: sample provider serves ai.aci.core.IACIService on kernel Binder as uid 1000"
    su -s /bin/sh client -c "/bin/aci_vm_client --registry /etc/aci-controller-registry.json" > /tmp/aci-client.log 2>&1
    while read -r verdict rest; do
        case "$verdict" in
        PASS) pass "aci: $rest" ;;
        FAIL) fail "aci: $rest" ;;
        esac
    done < /tmp/aci-client.log
    grep -q '^RESULT ok' /tmp/aci-client.log || fail "aci: client: $(grep -v '^PASS' /tmp/aci-client.log | head -20)"
    kill "$ACI_PROVIDER" 2>/dev/null
}
aci_round

# 4. The provider dies: the client's channel closes as peer_died (CH-42).
$PEER as-uid $CLIENT_UID hang binder://mcp --expect-uid $PROVIDER_UID > /tmp/hang2.log 2>&1 &
if wait_for /tmp/hang2.log '^READY|^RESULT' > /dev/null && grep -q '^READY' /tmp/hang2.log; then
    kill -9 "$PROVIDER"
    if line=$(wait_for /tmp/hang2.log '^CLOSED') && [ "$line" = "CLOSED peer_died" ]; then
        pass "peer death: killed provider -> client closed peer_died"
    else
        fail "peer death (provider): client: $(cat /tmp/hang2.log)"
    fi
else
    fail "peer death (provider): client did not open: $(cat /tmp/hang2.log)"
fi

finish
