# Shared by scripts/check and scripts/demo: install what memreg needs, then build.
# Sourced, not run. Expects $top (the source tree).

mr_say() { printf '==> %s\n' "$*"; }

# Install the packages of scripts/packages.txt that are missing (as root, Debian).
mr_install_packages() {
	local want=() missing=() p
	while read -r p; do
		p=${p%%#*}; p=${p//[[:space:]]/}
		[ -n "$p" ] && want+=("$p")
	done < "$top/scripts/packages.txt"
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		mr_say "all ${#want[@]} Debian packages present"
		return 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing Debian packages: ${missing[*]}; run as root to install them" >&2
		return 1
	fi
	mr_say "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# autoreconf + configure + make in $top/build (VPATH, so the tree stays clean).
mr_build() {
	local jobs
	jobs=$(nproc 2>/dev/null || echo 2)
	mr_say "building in $top/build"
	(cd "$top" && autoreconf -fi >/dev/null 2>&1) || (cd "$top" && autoreconf -fi)
	mkdir -p "$top/build"
	cd "$top/build"
	[ -f Makefile ] && [ Makefile -nt ../configure ] || ../configure -q "$@"
	make -s -j"$jobs"
}
