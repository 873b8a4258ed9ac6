/* MEMREG_* options: one table (MR_OPTIONS in internal.h), read by scanning environ
 * itself so nothing allocates before the allocator is ready. */
#include "config.h"

#include <string.h>

#include "allocator/internal.h"

struct mr_option mr_options[NR_MR_OPT] = {
#define MR_OPT_ENTRY(id, env, type, def, secure) { "MEMREG_" env, type, def, secure, def, NULL },
	MR_OPTIONS(MR_OPT_ENTRY)
#undef MR_OPT_ENTRY
};

static bool word_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char c = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;

		if (c != *b)
			return false;
	}
	return *a == *b;
}

int mr_option_parse(enum mr_opt_type type, const char *s, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	const char *p = s;

	switch (type) {
	case MR_OPT_BOOL:
		if (word_eq(s, "1") || word_eq(s, "on") || word_eq(s, "yes") || word_eq(s, "true")) {
			*out = 1;
			return 0;
		}
		if (word_eq(s, "0") || word_eq(s, "off") || word_eq(s, "no") || word_eq(s, "false")) {
			*out = 0;
			return 0;
		}
		return -1;
	case MR_OPT_PATH:
		return *s ? 0 : -1;
	case MR_OPT_SIZE:
	case MR_OPT_U64:
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
				return -1;
			v = v * 10 + (uint64_t)(*p - '0');
		}
		if (type == MR_OPT_SIZE && *p) {
			switch (*p == 'k' || *p == 'm' || *p == 'g' ? *p - 'a' + 'A' : *p) {
			case 'K': mul = UINT64_C(1) << 10; break;
			case 'M': mul = UINT64_C(1) << 20; break;
			case 'G': mul = UINT64_C(1) << 30; break;
			default: return -1;
			}
			p++;
			if (*p == 'i' && p[1] == 'B')
				p += 2;
			else if (*p == 'B')
				p++;
		}
		if (*p || v > UINT64_MAX / mul)
			return -1;
		*out = v * mul;
		return 0;
	}
	return -1;
}

void mr_options_load(char **envp, bool secure, void (*warn)(const char *name, const char *value))
{
	char **e;
	size_t i;

	for (i = 0; i < NR_MR_OPT; i++) {
		mr_options[i].value = mr_options[i].def;
		mr_options[i].str = NULL;
	}
	for (e = envp; e && *e; e++) {
		if (strncmp(*e, "MEMREG_", 7) != 0)
			continue;
		for (i = 0; i < NR_MR_OPT; i++) {
			struct mr_option *o = &mr_options[i];
			size_t n = strlen(o->env);
			uint64_t v;

			if (strncmp(*e, o->env, n) != 0 || (*e)[n] != '=')
				continue;
			/* A setuid program must not be steered by its caller's environment. */
			if (secure && !o->secure)
				break;
			if (mr_option_parse(o->type, *e + n + 1, &v) != 0) {
				if (warn)
					warn(o->env, *e + n + 1);
				break;
			}
			if (o->type == MR_OPT_PATH)
				o->str = *e + n + 1;
			else
				o->value = v;
			break;
		}
	}
}
