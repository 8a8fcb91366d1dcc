/*
 * test_inv_current.c - the inventory in force (inventory.h): a reader keeps
 * the inventory it took across a reload, the next reader gets the new one,
 * and the old one goes when its last reader lets go.  Under ASan/UBSan (the
 * sanitizer run of ./deploy/check) the threaded case also proves that no
 * reader ever touches a freed inventory and nothing leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "inventory.h"

static struct tb_inventory *load(const char *address)
{
	char text[256];
	struct tb_inventory *inv = NULL;
	struct tb_error err = {0};

	snprintf(text, sizeof(text),
		 "version: 1\nssh: {user: root, key_file: /k}\nmachines:\n"
		 "  left:\n    role: host\n    os:\n      ubuntu: {address: %s}\n",
		 address);
	assert_int_equal(tb_inventory_load_buffer("t.yaml", text, strlen(text), 0, &inv, &err), 0);
	return inv;
}

static const char *address_of(const struct tb_inventory *inv)
{
	const struct tb_machine *m = tb_inventory_find(inv, "left");

	return m->os[0].address;
}

static void test_get_put_swap(void **state)
{
	struct tb_inv_current *c = tb_inv_current_new(load("198.18.0.11"));
	struct tb_inventory *a, *b;

	(void)state;
	assert_non_null(c);
	a = tb_inv_current_get(c);
	assert_string_equal(address_of(a), "198.18.0.11");
	assert_int_equal(a->refs, 2); /* the holder's and ours */
	tb_inv_current_swap(c, load("198.18.0.12"));
	/* the reader still has the inventory it took, whole */
	assert_int_equal(a->refs, 1);
	assert_string_equal(address_of(a), "198.18.0.11");
	b = tb_inv_current_get(c);
	assert_string_equal(address_of(b), "198.18.0.12");
	tb_inv_current_put(c, a); /* the last reader: the old one goes */
	tb_inv_current_put(c, b);
	assert_int_equal(b->refs, 1);
	tb_inv_current_put(c, NULL); /* allowed, nothing happens */
	tb_inv_current_free(c);
}

struct reader {
	struct tb_inv_current *c;
	int bad;
};

static void *read_many(void *arg)
{
	struct reader *r = arg;

	for (int i = 0; i < 20000; i++) {
		struct tb_inventory *inv = tb_inv_current_get(r->c);

		if (strncmp(address_of(inv), "198.18.0.", 9) != 0)
			r->bad++;
		tb_inv_current_put(r->c, inv);
	}
	return NULL;
}

static void test_readers_during_reloads(void **state)
{
	struct tb_inv_current *c = tb_inv_current_new(load("198.18.0.11"));
	struct reader r[3] = {{c, 0}, {c, 0}, {c, 0}};
	pthread_t th[3];

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, read_many, &r[i]), 0);
	for (int i = 0; i < 200; i++) {
		char addr[32];

		snprintf(addr, sizeof(addr), "198.18.0.%d", 20 + i % 200);
		tb_inv_current_swap(c, load(addr));
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].bad, 0);
	}
	tb_inv_current_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_put_swap),
		cmocka_unit_test(test_readers_during_reloads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
