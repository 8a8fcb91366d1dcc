/* invadmin.c - the loaded inventory's file, load time and last reload: see
 * invadmin.h. */
#include "invadmin.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeutil.h"

struct tb_invadmin {
	pthread_mutex_t lock; /* held across a reload: reloads run one at a time */
	char *path;
	int64_t loaded_at;
	tb_invadmin_reload_fn reload;
	void *cls;
	int reloaded; /* a reload was tried */
	int64_t last_at;
	int last_ok;
	char last_by[64];
	char last_error[TB_ERROR_MSG_MAX];
};

struct tb_invadmin *tb_invadmin_new(const char *path)
{
	struct tb_invadmin *ia = calloc(1, sizeof(*ia));

	if (ia == NULL)
		return NULL;
	if ((ia->path = strdup(path)) == NULL) {
		free(ia);
		return NULL;
	}
	pthread_mutex_init(&ia->lock, NULL);
	ia->loaded_at = tb_now();
	return ia;
}

void tb_invadmin_free(struct tb_invadmin *ia)
{
	if (ia == NULL)
		return;
	pthread_mutex_destroy(&ia->lock);
	free(ia->path);
	free(ia);
}

void tb_invadmin_set_reload(struct tb_invadmin *ia, tb_invadmin_reload_fn fn, void *cls)
{
	pthread_mutex_lock(&ia->lock);
	ia->reload = fn;
	ia->cls = cls;
	pthread_mutex_unlock(&ia->lock);
}

int tb_invadmin_reload(struct tb_invadmin *ia, const char *who, struct tb_error *err)
{
	struct tb_error e = {0};
	int rc;

	pthread_mutex_lock(&ia->lock);
	if (ia->reload == NULL)
		rc = tb_fail(&e, TB_ERR_INTERNAL, "", "no reload is wired");
	else
		rc = ia->reload(ia->cls, &e);
	ia->reloaded = 1;
	ia->last_at = tb_now();
	ia->last_ok = rc == 0;
	snprintf(ia->last_by, sizeof(ia->last_by), "%s", who != NULL ? who : "");
	snprintf(ia->last_error, sizeof(ia->last_error), "%s", rc == 0 ? "" : e.message);
	if (rc == 0)
		ia->loaded_at = ia->last_at;
	pthread_mutex_unlock(&ia->lock);
	if (rc != 0 && err != NULL)
		*err = e;
	return rc;
}

const char *tb_invadmin_path(const struct tb_invadmin *ia)
{
	return ia->path;
}

json_t *tb_invadmin_json(struct tb_invadmin *ia)
{
	json_t *last = json_null(), *j;

	pthread_mutex_lock(&ia->lock);
	if (ia->reloaded)
		last = json_pack("{s:o, s:s, s:b, s:o}", "at", tb_time_json(ia->last_at), "by", ia->last_by, "ok",
				 ia->last_ok, "error", ia->last_ok ? json_null() : json_string(ia->last_error));
	j = json_pack("{s:s, s:o, s:o}", "file", ia->path, "loaded_at", tb_time_json(ia->loaded_at), "last_reload",
		      last != NULL ? last : json_null());
	pthread_mutex_unlock(&ia->lock);
	return j;
}

/* The digits at *p into *v; the end, or NULL when there are none. */
static const char *digits(const char *p, long *v)
{
	char *end;

	if (*p < '0' || *p > '9')
		return NULL;
	*v = strtol(p, &end, 10);
	return end;
}

void tb_invadmin_where(const char *name, const char *message, long *line, long *col)
{
	size_t n = strlen(name);
	const char *p;
	long l = 0, c = 0;

	*line = *col = 0;
	if (strncmp(message, name, n) != 0 || message[n] != ':')
		return;
	p = digits(message + n + 1, &l);
	if (p == NULL || *p != ':' || (p = digits(p + 1, &c)) == NULL || *p != ':')
		return;
	*line = l;
	*col = c;
}
