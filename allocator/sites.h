/* Allocation sites (sites.c): each site's temperature (profile, memreg.h calls, the
 * controller's classes page), site tracking for the site map, and the map itself.
 * Read by the front end; walks the page heap and writes into the stats export,
 * both below it. Nothing here allocates. */
#ifndef MR_ALLOCATOR_SITES_H
#define MR_ALLOCATOR_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "allocator/internal.h"
#include "allocator/os.h"

/* Whether any site has a class (the front end then looks each one up). */
extern int mr_sites_on MR_HIDDEN;
/* The temperature of allocation site @ret (a return address), @def if unknown. */
enum mr_temp mr_site_temp(const void *ret, enum mr_temp def) MR_HIDDEN;
int mr_site_set(const void *ret, enum mr_temp temp) MR_HIDDEN;
void mr_sites_init(void) MR_HIDDEN;
int mr_profile_load(const char *path) MR_HIDDEN;
int mr_site_locate(uintptr_t addr, char *build_id, size_t len, const char **path,
		   uintptr_t *off) MR_HIDDEN;
/* Site tracking (MEMREG_SITE_MAP): the site id of the object at each arena granule. */
extern uint16_t *mr_site_ids MR_HIDDEN;
/* The slot of arena address @p in mr_site_ids: one per 16 bytes (MR_MIN_ALIGN). */
static inline size_t mr_site_slot(const void *p)
{
	return ((uintptr_t)p - (uintptr_t)mr_arena_base) >> 4;
}
void mr_sites_track(void) MR_HIDDEN;
uint16_t mr_site_id(const void *ret) MR_HIDDEN;
void mr_site_map_write(const char *path) MR_HIDDEN;
void mr_sites_lock(void) MR_HIDDEN;
void mr_sites_unlock(void) MR_HIDDEN;
void mr_sites_fork_lock(void) MR_HIDDEN;	/* fork: os.h, mr_os_fork_lock */
void mr_sites_fork_unlock(void) MR_HIDDEN;
/* The live hand-over (classes-format.h): apply a new classes page, answer a map
 * request. Called on the slow path (mr_site_id), with no lock held. */
void mr_classes_poll(void) MR_HIDDEN;
void mr_classes_after_fork(void) MR_HIDDEN;

#endif
