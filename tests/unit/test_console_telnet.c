/*
 * test_console_telnet.c - the telnet a console reader speaks in telnet mode
 * (console_telnet.c): IAC taken out of and doubled into the data, option
 * negotiation answered once (what we do: BINARY, COM-PORT-OPTION; what the
 * server may do: BINARY, ECHO, SGA; everything else refused), a
 * subnegotiation skipped also when split over reads, CR NUL outside binary
 * mode, and RFC 2217's SET-CONTROL BREAK ON/OFF bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "console_internal.h"
#include "inventory.h"

enum { SE = 240, SB = 250, WILL = 251, WONT = 252, DO = 253, DONT = 254, IAC = 255 };

static size_t decode(struct tb_telnet *t, const unsigned char *in, size_t n, unsigned char *data,
		     struct tb_telnet_out *reply)
{
	reply->len = 0;
	return tb_telnet_decode(t, in, n, data, reply);
}

static void hello_asks_binary_and_comport(void **state)
{
	struct tb_telnet t;
	unsigned char out[9];
	const unsigned char want[9] = {IAC, WILL, 0, IAC, DO, 0, IAC, WILL, 44};

	(void)state;
	assert_int_equal(tb_telnet_hello(&t, out), 9);
	assert_memory_equal(out, want, 9);
}

static void iac_is_taken_out_and_doubled_in(void **state)
{
	struct tb_telnet t;
	unsigned char hello[9], data[64], wire[64];
	struct tb_telnet_out reply;
	const unsigned char in[] = {'a', IAC, IAC, 'b', IAC, 241 /* NOP */, 'c'};
	const unsigned char raw[] = {'x', 0xff, 'y'};
	const unsigned char doubled[] = {'x', 0xff, 0xff, 'y'};
	size_t n;

	(void)state;
	tb_telnet_hello(&t, hello);
	n = decode(&t, in, sizeof(in), data, &reply);
	assert_int_equal(n, 4);
	assert_memory_equal(data,
			    "a\xff"
			    "bc",
			    4);
	assert_int_equal(reply.len, 0);
	n = tb_telnet_encode(&t, raw, sizeof(raw), wire);
	assert_int_equal(n, sizeof(doubled));
	assert_memory_equal(wire, doubled, n);
}

static void options_are_answered_once(void **state)
{
	struct tb_telnet t;
	unsigned char hello[9], data[64];
	struct tb_telnet_out reply;
	/* ser2net's opening: WILL ECHO, WILL SGA, DO COM-PORT (already said), DO TTYPE(24) */
	const unsigned char in[] = {IAC, WILL, 1, IAC, WILL, 3, IAC, DO, 44, IAC, DO, 24, IAC, WILL, 5};
	const unsigned char want[] = {IAC, DO, 1, IAC, DO, 3, IAC, WONT, 24, IAC, DONT, 5};
	const unsigned char again[] = {IAC, WILL, 1, IAC, DO, 0};

	(void)state;
	tb_telnet_hello(&t, hello);
	assert_int_equal(decode(&t, in, sizeof(in), data, &reply), 0);
	assert_int_equal(reply.len, sizeof(want));
	assert_memory_equal(reply.buf, want, sizeof(want));
	/* the same again: nothing changes, nothing is said (no loop) */
	assert_int_equal(decode(&t, again, sizeof(again), data, &reply), 0);
	assert_int_equal(reply.len, 0);
	/* the server stops echoing: acknowledged once */
	{
		const unsigned char wont[] = {IAC, WONT, 1, IAC, WONT, 1};
		const unsigned char ack[] = {IAC, DONT, 1};

		decode(&t, wont, sizeof(wont), data, &reply);
		assert_int_equal(reply.len, 3);
		assert_memory_equal(reply.buf, ack, 3);
	}
}

static void subnegotiation_skipped_across_reads(void **state)
{
	struct tb_telnet t;
	unsigned char hello[9], data[64];
	struct tb_telnet_out reply;
	/* the server's answer to SET-CONTROL (105), split inside */
	const unsigned char a[] = {'o', 'k', IAC, SB, 44, 105};
	const unsigned char b[] = {5, IAC, SE, '!'};

	(void)state;
	tb_telnet_hello(&t, hello);
	assert_int_equal(decode(&t, a, sizeof(a), data, &reply), 2);
	assert_memory_equal(data, "ok", 2);
	assert_int_equal(decode(&t, b, sizeof(b), data, &reply), 1);
	assert_int_equal(data[0], '!');
}

static void cr_nul_outside_binary(void **state)
{
	struct tb_telnet t;
	unsigned char hello[9], data[64], wire[64];
	struct tb_telnet_out reply;
	const unsigned char refuse[] = {IAC, WONT, 0, IAC, DONT, 0};
	const unsigned char in[] = {'a', '\r', 0, 'b', '\r', '\n'};

	(void)state;
	tb_telnet_hello(&t, hello);
	/* binary refused both ways: NVT rules */
	decode(&t, refuse, sizeof(refuse), data, &reply);
	assert_int_equal(decode(&t, in, sizeof(in), data, &reply), 5);
	assert_memory_equal(data, "a\rb\r\n", 5);
	assert_int_equal(tb_telnet_encode(&t, (const unsigned char *)"x\ry\r\n", 5, wire), 6);
	assert_memory_equal(wire, "x\r\0y\r\n", 6);
	/* in binary mode a CR stays one byte */
	tb_telnet_hello(&t, hello);
	assert_int_equal(tb_telnet_encode(&t, (const unsigned char *)"x\ry", 3, wire), 3);
}

static void break_is_rfc2217_set_control(void **state)
{
	unsigned char b[7];
	const unsigned char on[7] = {IAC, SB, 44, 5, 5, IAC, SE};
	const unsigned char off[7] = {IAC, SB, 44, 5, 6, IAC, SE};

	(void)state;
	assert_int_equal(tb_telnet_break(1, b), 7);
	assert_memory_equal(b, on, 7);
	assert_int_equal(tb_telnet_break(0, b), 7);
	assert_memory_equal(b, off, 7);
}

#define INV                                                                                                            \
	"version: 1\nssh: {user: root, key_file: /k}\nmachines:\n  left:\n    role: host\n    os: {ubuntu: {address: " \
	"10.0.0.1}}\n"

static void inventory_protocol(void **state)
{
	struct tb_inventory *inv = NULL;
	struct tb_error err;
	json_t *j;
	const char *raw = INV "    console: {type: tcp, address: 10.0.0.9, port: 2001}\n";
	const char *tn = INV "    console: {type: tcp, address: 10.0.0.9, port: 2001, protocol: telnet}\n";
	const char *bad = INV "    console: {type: tcp, address: 10.0.0.9, port: 2001, protocol: rfc2217}\n";
	const char *dev = INV "    console: {type: device, device: /dev/ttyS0, protocol: telnet}\n";

	(void)state;
	assert_int_equal(tb_inventory_load_buffer("t.yaml", raw, strlen(raw), 0, &inv, &err), 0);
	assert_int_equal(inv->machines[0].console.protocol, TB_CONSOLE_RAW);
	j = tb_machine_to_json(&inv->machines[0]);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "console"), "protocol")), "raw");
	json_decref(j);
	tb_inventory_free(inv);
	assert_int_equal(tb_inventory_load_buffer("t.yaml", tn, strlen(tn), 0, &inv, &err), 0);
	assert_int_equal(inv->machines[0].console.protocol, TB_CONSOLE_TELNET);
	j = tb_machine_to_json(&inv->machines[0]);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "console"), "protocol")), "telnet");
	json_decref(j);
	tb_inventory_free(inv);
	inv = NULL;
	assert_int_not_equal(tb_inventory_load_buffer("t.yaml", bad, strlen(bad), 0, &inv, &err), 0);
	assert_null(inv);
	assert_string_equal(
		err.message,
		"t.yaml:7:67: machines.left.console.protocol: expected one of raw | telnet, got \"rfc2217\"");
	assert_int_not_equal(tb_inventory_load_buffer("t.yaml", dev, strlen(dev), 0, &inv, &err), 0);
	assert_non_null(strstr(err.message, "t.yaml:7:"));
	assert_non_null(strstr(err.message, "protocol (raw | telnet) is for a tcp console only"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hello_asks_binary_and_comport),
		cmocka_unit_test(iac_is_taken_out_and_doubled_in),
		cmocka_unit_test(options_are_answered_once),
		cmocka_unit_test(subnegotiation_skipped_across_reads),
		cmocka_unit_test(cr_nul_outside_binary),
		cmocka_unit_test(break_is_rfc2217_set_control),
		cmocka_unit_test(inventory_protocol),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
