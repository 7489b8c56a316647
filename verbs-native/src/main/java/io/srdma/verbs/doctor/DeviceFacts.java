package io.srdma.verbs.doctor;

import java.util.List;

/**
 * What sysfs says about one RDMA device ({@code /sys/class/infiniband/<name>}).
 *
 * @param name the device name ({@code rxe0}, {@code mlx5_0})
 * @param provider the kernel driver ({@code mlx5_core}) or, for software devices, what the name
 *     says ({@code rdma_rxe (Soft-RoCE)})
 * @param ports its ports, by number
 */
public record DeviceFacts(String name, String provider, List<PortFacts> ports) {
  /** Creates the facts; the port list is copied. */
  public DeviceFacts {
    ports = List.copyOf(ports);
  }
}
