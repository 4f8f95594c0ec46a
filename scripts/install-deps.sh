#!/usr/bin/env bash
# install-deps.sh installs what tierbench's tests and benchmarks use beyond Go:
# fio (the device ceiling), redis-server and redis-tools (the peer server and
# redis-benchmark/redis-cli), numactl and sysstat (pinning and iostat), and
# for the tests' two-host harness (a dockerd per network namespace)
# iproute2, nsenter and fuse-overlayfs, the storage driver those engines use;
# librsvg2-bin (rsvg-convert renders the bundle's SVG charts in the tests) and
# fonts-liberation2 (the charts' font: the rendering keeps the layout's metrics);
# chromium (the tests open report.html and compare's page in it headless).
# Run as root (or with sudo) on Debian or Ubuntu. It is idempotent.
set -euo pipefail
need=()
for pair in fio:fio redis-server:redis-server redis-benchmark:redis-tools numactl:numactl iostat:sysstat \
	ip:iproute2 nsenter:util-linux fuse-overlayfs:fuse-overlayfs rsvg-convert:librsvg2-bin chromium:chromium; do
	cmd=${pair%%:*} pkg=${pair##*:}
	command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
done
if ! fc-list 2>/dev/null | grep -q LiberationSans-Regular; then need+=(fonts-liberation2); fi
if [ ${#need[@]} -gt 0 ]; then
	echo "install-deps: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi
# redis-server's package starts a system instance on 6379; the tests start
# their own on free ports, so stop it to keep the machine quiet.
if command -v systemctl >/dev/null 2>&1; then systemctl stop redis-server >/dev/null 2>&1 || true; fi
if command -v service >/dev/null 2>&1; then service redis-server stop >/dev/null 2>&1 || true; fi
echo "install-deps: fio $(fio --version), $(redis-server --version | cut -d' ' -f1-3)"
