/* ratelimit.c - failed authentications per address: see ratelimit.h. */
#include "ratelimit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timeutil.h"

struct rate_slot {
	char key[64];         /* "" when empty */
	int64_t window_start; /* monotonic seconds of the window's first failure */
	int64_t last_failure;
	int failures;
};

struct tb_ratelimit {
	pthread_mutex_t lock;
	int max, window;
	struct rate_slot slots[TB_RATE_SLOTS];
};

int64_t tb_ratelimit_now(void)
{
	return tb_monotonic_ms() / 1000;
}

struct tb_ratelimit *tb_ratelimit_new(int max_failures, int window_s)
{
	struct tb_ratelimit *rl = calloc(1, sizeof(*rl));

	if (rl == NULL)
		return NULL;
	pthread_mutex_init(&rl->lock, NULL);
	rl->max = max_failures;
	rl->window = window_s;
	return rl;
}

void tb_ratelimit_free(struct tb_ratelimit *rl)
{
	if (rl == NULL)
		return;
	pthread_mutex_destroy(&rl->lock);
	free(rl);
}

void tb_ratelimit_key(const char *addr, char *key, size_t len)
{
	char plain[INET6_ADDRSTRLEN + 1], text[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	size_t n = strcspn(addr, "%");

	snprintf(key, len, "%s", addr);
	if (n >= sizeof(plain))
		return;
	memcpy(plain, addr, n);
	plain[n] = '\0';
	if (inet_pton(AF_INET6, plain, &a6) != 1 || IN6_IS_ADDR_V4MAPPED(&a6))
		return;
	memset(a6.s6_addr + 8, 0, 8);
	if (inet_ntop(AF_INET6, &a6, text, sizeof(text)) != NULL)
		snprintf(key, len, "%s/64", text);
}

static int live(const struct tb_ratelimit *rl, const struct rate_slot *s, int64_t now)
{
	return s->key[0] != '\0' && now - s->window_start < rl->window;
}

static int limited(const struct tb_ratelimit *rl, const struct rate_slot *s, int64_t now)
{
	return live(rl, s, now) && s->failures >= rl->max;
}

/* The slot of key, or (create) a new one chosen as ratelimit.h says. */
static struct rate_slot *slot_for(struct tb_ratelimit *rl, const char *key, int64_t now, int create)
{
	struct rate_slot *free_slot = NULL, *quiet = NULL, *ending = NULL;

	for (size_t i = 0; i < TB_RATE_SLOTS; i++) {
		struct rate_slot *s = &rl->slots[i];

		if (s->key[0] != '\0' && strcmp(s->key, key) == 0)
			return s;
		if (!live(rl, s, now)) {
			if (free_slot == NULL)
				free_slot = s;
		} else if (!limited(rl, s, now)) {
			if (quiet == NULL || s->last_failure < quiet->last_failure)
				quiet = s;
		} else if (ending == NULL || s->window_start < ending->window_start) {
			ending = s;
		}
	}
	if (!create)
		return NULL;
	if (free_slot == NULL)
		free_slot = quiet != NULL ? quiet : ending;
	memset(free_slot, 0, sizeof(*free_slot));
	snprintf(free_slot->key, sizeof(free_slot->key), "%s", key);
	free_slot->window_start = now;
	return free_slot;
}

static int left(const struct tb_ratelimit *rl, const struct rate_slot *s, int64_t now)
{
	int64_t l = s->window_start + rl->window - now;

	return l < 1 ? 1 : (int)l;
}

int tb_ratelimit_check(struct tb_ratelimit *rl, const char *addr, int *retry_after_s, struct tb_error *err)
{
	int64_t now = tb_ratelimit_now();
	struct rate_slot *s;
	char key[64];
	int rc = 0;

	tb_ratelimit_key(addr, key, sizeof(key));
	pthread_mutex_lock(&rl->lock);
	s = slot_for(rl, key, now, 0);
	if (s != NULL && limited(rl, s, now)) {
		*retry_after_s = left(rl, s, now);
		rc = tb_fail(err, TB_ERR_RATE_LIMITED, "", "too many failed authentications from %s: try again in %d s",
			     key, *retry_after_s);
	}
	pthread_mutex_unlock(&rl->lock);
	return rc;
}

int tb_ratelimit_failed(struct tb_ratelimit *rl, const char *addr, int *retry_after_s)
{
	int64_t now = tb_ratelimit_now();
	struct rate_slot *s;
	char key[64];
	int became = 0;

	tb_ratelimit_key(addr, key, sizeof(key));
	pthread_mutex_lock(&rl->lock);
	s = slot_for(rl, key, now, 1);
	if (!live(rl, s, now)) {
		s->window_start = now;
		s->failures = 0;
	}
	s->last_failure = now;
	if (s->failures < rl->max) {
		s->failures++;
		became = s->failures == rl->max;
	}
	if (retry_after_s != NULL)
		*retry_after_s = limited(rl, s, now) ? left(rl, s, now) : 0;
	pthread_mutex_unlock(&rl->lock);
	return became;
}
