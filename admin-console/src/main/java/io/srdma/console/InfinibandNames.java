package io.srdma.console;

import io.srdma.verbs.doctor.DeviceCounter;
import java.util.Map;

/**
 * Prometheus names for RDMA device counters, after node_exporter's infiniband collector with the
 * console's {@code srdma_} namespace in place of {@code node_}: the standard port counters ({@code
 * ports/<n>/counters}) get node_exporter's names ({@code port_rcv_data} → {@code
 * srdma_infiniband_port_data_received_bytes_total}, in bytes as node_exporter reports it: the file
 * counts 4-byte words); any other port counter, and every driver counter ({@code hw_counters},
 * whose names differ by driver), goes to one generic series with the file name in a {@code counter}
 * label.
 */
final class InfinibandNames {
  /**
   * A counter's metric.
   *
   * @param meter the Micrometer name (Prometheus adds {@code _total})
   * @param help the description
   * @param counter the {@code counter} label's value, or null when the name says it
   * @param scale what the file's value is multiplied by
   */
  record Name(String meter, String help, String counter, double scale) {}

  static final String PORT_GENERIC = "srdma.infiniband.port.counter";
  static final String HW_GENERIC = "srdma.infiniband.hw.counter";

  private static final Map<String, Name> PORT =
      Map.ofEntries(
          port(
              "excessive_buffer_overrun_errors",
              "excessive.buffer.overrun.errors",
              "buffer overruns"),
          port("link_downed", "link.downed", "times the link went down after failing to recover"),
          port(
              "link_error_recovery", "link.error.recovery", "times the link recovered from errors"),
          port(
              "local_link_integrity_errors",
              "local.link.integrity.errors",
              "local link integrity errors"),
          port(
              "multicast_rcv_packets",
              "multicast.packets.received",
              "multicast packets received, errors included"),
          port(
              "multicast_xmit_packets",
              "multicast.packets.transmitted",
              "multicast packets sent, errors included"),
          port(
              "port_rcv_constraint_errors",
              "port.constraint.errors.received",
              "received packets discarded for constraints"),
          port(
              "port_xmit_constraint_errors",
              "port.constraint.errors.transmitted",
              "packets not sent for constraints"),
          Map.entry(
              "port_rcv_data",
              new Name(
                  "srdma.infiniband.port.data.received.bytes",
                  "data bytes received on the port (the file counts 4-byte words)",
                  null,
                  4)),
          Map.entry(
              "port_xmit_data",
              new Name(
                  "srdma.infiniband.port.data.transmitted.bytes",
                  "data bytes sent from the port (the file counts 4-byte words)",
                  null,
                  4)),
          port(
              "port_rcv_discards",
              "port.discards.received",
              "inbound packets dropped (port down or congested)"),
          port(
              "port_xmit_discards",
              "port.discards.transmitted",
              "outbound packets dropped (port down or congested)"),
          port("port_rcv_errors", "port.errors.received", "received packets with an error"),
          port(
              "port_rcv_packets",
              "port.packets.received",
              "packets received on the port, errors included"),
          port(
              "port_xmit_packets",
              "port.packets.transmitted",
              "packets sent from the port, errors included"),
          port("port_xmit_wait", "port.transmit.wait", "ticks with data to send but nothing sent"),
          port(
              "unicast_rcv_packets",
              "unicast.packets.received",
              "unicast packets received, errors included"),
          port(
              "unicast_xmit_packets",
              "unicast.packets.transmitted",
              "unicast packets sent, errors included"),
          port(
              "port_rcv_remote_physical_errors",
              "port.receive.remote.physical.errors",
              "received packets marked bad by the remote end"),
          port(
              "port_rcv_switch_relay_errors",
              "port.receive.switch.relay.errors",
              "packets a switch could not forward"),
          port("symbol_error", "symbol.error", "minor link errors on the physical lanes"),
          port("VL15_dropped", "vl15.dropped", "incoming VL15 packets dropped"));

  private InfinibandNames() {}

  private static Map.Entry<String, Name> port(String file, String suffix, String help) {
    return Map.entry(file, new Name("srdma.infiniband." + suffix, help, null, 1));
  }

  /** The metric a counter is exported as. */
  static Name of(DeviceCounter c) {
    if (c.group() == DeviceCounter.Group.PORT) {
      Name n = PORT.get(c.name());
      return n != null
          ? n
          : new Name(
              PORT_GENERIC, "other port counters (ports/<n>/counters/<counter>)", c.name(), 1);
    }
    return new Name(
        HW_GENERIC,
        "the driver's hardware counters (ports/<n>/hw_counters/<counter>)",
        c.name(),
        1);
  }
}
