# completion/: bash completion for memregctl, installed where bash-completion loads
# it on demand (configure: --with-bash-completion-dir). The file is named after the
# command, as bash-completion looks it up.
nodist_bashcompletion_DATA = completion/memregctl
CLEANFILES += completion/memregctl
EXTRA_DIST += completion/memregctl.bash

completion/memregctl: completion/memregctl.bash
	$(AM_V_GEN)$(MKDIR_P) $(@D) && cp $(srcdir)/completion/memregctl.bash $@
