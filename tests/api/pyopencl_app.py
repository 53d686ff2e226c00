"""A pyopencl program run unchanged by tutti-run on every rank: a vector add and
pyopencl.array reductions (sum, dot, max) on every device, and one array moved between the
devices of two ranks. Prints "pyopencl: N devices ok" when every result is right, else the
first wrong one, and exits 1."""
import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

SRC = """
__kernel void add(__global const float *a, __global const float *b, __global float *c)
{
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
"""


def check(what, ok):
    if not ok:
        print("pyopencl: wrong:", what, flush=True)
        sys.exit(1)


def main():
    platform = cl.get_platforms()[0]
    devices = platform.get_devices()
    ctx = cl.Context(devices)
    queues = [cl.CommandQueue(ctx, d) for d in devices]
    rng = np.random.default_rng(20261123)  # alike on every rank
    n = 100003
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    prg = cl.Program(ctx, SRC).build()
    for i, q in enumerate(queues):
        a_g = cla.to_device(q, a)
        b_g = cla.to_device(q, b)
        c_g = cla.empty_like(a_g)
        prg.add(q, (n,), None, a_g.data, b_g.data, c_g.data)
        check("vector add on device %d" % i, np.allclose(c_g.get(), a + b))
        s = cla.sum(a_g).get()
        check("sum on device %d: %r" % (i, s), abs(s - a.sum(dtype=np.float64)) < 1e-2 * n * 1e-3)
        d = cla.dot(a_g, b_g).get()
        check("dot on device %d: %r" % (i, d), abs(d - np.dot(a.astype(np.float64), b)) < 1)
        m = cla.max(c_g).get()
        check("max on device %d: %r" % (i, m), m == (a + b).max())
    # One array made on the first device, used on the last one (another rank's).
    x = cla.to_device(queues[0], a)
    x = x * 3
    y = x.with_queue(queues[-1])
    y = y + 1
    check("array moved between devices", np.allclose(y.get(), a * 3 + 1))
    print("pyopencl: %d devices ok" % len(devices), flush=True)


main()
