#!/usr/bin/python3
# A stand-in for netperf 2.7 and netserver where netperf cannot run: it is not
# packaged in Debian 12, so tests/browser/test_run_netperf_rr.mjs puts this
# file as `netperf` and `netserver` on the simulated hosts (a tmpfs on
# /usr/local/bin in their mount namespaces).  It really exchanges requests and
# responses over TCP (UDP is refused) and prints what netperf's omni output
# would: one line of the values of the selectors asked for with `-o` (-P 0),
# latencies in microseconds.  netserver: `netserver -D -p PORT [-6]` answers
# every request with as many bytes until it is killed.  Only what testbedd
# runs is understood.
import os, socket, sys, threading, time

def netserver(args):
    port = int(args[args.index('-p') + 1])
    fam = socket.AF_INET6 if '-6' in args else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('::' if fam == socket.AF_INET6 else '0.0.0.0', port))
    s.listen(8)
    print('Starting netserver with host IN(6)ADDR_ANY port %d and family AF_UNSPEC' % port, flush=True)
    def serve(c):
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            b = c.recv(65536)
            if not b:
                return
            c.sendall(b)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()

def netperf(args):
    if '-V' in args:
        print('Netperf version 2.7.0')
        return 0
    host, port = args[args.index('-H') + 1], int(args[args.index('-p') + 1])
    test, secs = args[args.index('-t') + 1], float(args[args.index('-l') + 1])
    sel = args[args.index('-o') + 1].split(',')
    size = int(args[args.index('-r') + 1].split(',')[0]) if '-r' in args else 1
    if test != 'TCP_RR':
        print('netperf stand-in: only TCP_RR is simulated, not %s' % test, file=sys.stderr)
        return 1
    try:
        c = socket.create_connection((host, port), timeout=5)
    except OSError as e:
        print('establish control: are you sure there is a netserver listening on %s at port %d?' % (host, port), file=sys.stderr)
        print('establish_control could not establish the control connection: %s' % e, file=sys.stderr)
        return 1
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    msg, lat, sent, got = b'x' * size, [], 0, 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < secs:
        a = time.monotonic()
        c.sendall(msg)
        sent += size
        n = 0
        while n < size:
            b = c.recv(size - n)
            if not b:
                break
            n += len(b)
        got += n
        lat.append((time.monotonic() - a) * 1e6)
    el = time.monotonic() - t0
    lat.sort()
    pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    rate = len(lat) / el
    v = {'THROUGHPUT': '%.2f' % rate, 'THROUGHPUT_UNITS': 'Trans/s', 'ELAPSED_TIME': '%.2f' % el,
         'PROTOCOL': 'TCP', 'TRANSACTION_RATE': '%.2f' % rate, 'MEAN_LATENCY': '%.2f' % (sum(lat) / len(lat)),
         'P50_LATENCY': '%d' % pct(0.5), 'P90_LATENCY': '%d' % pct(0.9), 'P99_LATENCY': '%d' % pct(0.99),
         'REQUEST_SIZE': str(size), 'RESPONSE_SIZE': str(size), 'LOCAL_BYTES_SENT': str(sent),
         'LOCAL_BYTES_RECVD': str(got)}
    print(','.join(v.get(k, '-1') for k in sel))
    return 0

if __name__ == '__main__':
    name = os.path.basename(sys.argv[0])
    sys.exit(netserver(sys.argv[1:]) if name == 'netserver' else netperf(sys.argv[1:]))
