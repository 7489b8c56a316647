package io.srdma.verbs.doctor;

/**
 * One counter of an RDMA device port as sysfs shows it, unscaled: {@code <root>/class/infiniband/
 * <device>/ports/<port>/counters/<name>} ({@link Group#PORT}, the InfiniBand PortCounters a
 * performance-management agent answers) or {@code .../hw_counters/<name>} ({@link Group#HW}, the
 * driver's own, e.g. rxe's {@code rcvd_rnr_err} or mlx5's {@code resp_remote_access_errors}).
 *
 * @param device the device name, e.g. {@code rxe0}
 * @param port the port number, from 1
 * @param group which folder the counter is in
 * @param name the file name, e.g. {@code port_rcv_errors}
 * @param value the value, an unsigned 64-bit number (see {@link #asDouble()})
 */
public record DeviceCounter(String device, int port, Group group, String name, long value) {

  /** The folder a counter is read from. */
  public enum Group {
    /** {@code ports/<n>/counters}: the standard InfiniBand port counters. */
    PORT,
    /** {@code ports/<n>/hw_counters}: the driver's own counters. */
    HW
  }

  /** The value as a double, reading {@link #value()} as unsigned. */
  public double asDouble() {
    return value >= 0 ? value : (value >>> 1) * 2.0 + (value & 1);
  }
}
