/**
 * {@code srdma doctor}: examines a host's RDMA setup (devices and ports from sysfs, libibverbs,
 * memlock, the {@code ibv} provider's self-test) and names the command that fixes each problem.
 */
package io.srdma.verbs.doctor;
