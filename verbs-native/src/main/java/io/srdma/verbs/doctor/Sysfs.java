package io.srdma.verbs.doctor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Reads RDMA devices from a sysfs tree: {@code <root>/class/infiniband/<dev>/ports/<n>/{state,
 * phys_state, link_layer, gids/<i>, gid_attrs/types/<i>, gid_attrs/ndevs/<i>}} and {@code
 * <root>/class/net/<netdev>/mtu}. The root is {@code /sys} on a host; tests hand it a temporary
 * folder laid out the same way.
 */
public final class Sysfs {
  private static final String ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000";

  private final Path root;

  /**
   * Reads below {@code root}.
   *
   * @param root the sysfs mount point, normally {@code /sys}
   */
  public Sysfs(Path root) {
    this.root = root;
  }

  /** The sysfs root this reads. */
  public Path root() {
    return root;
  }

  /** Every RDMA device, sorted by name; empty when the kernel has none (or no RDMA at all). */
  public List<DeviceFacts> devices() {
    Path dir = root.resolve("class/infiniband");
    List<DeviceFacts> out = new ArrayList<>();
    for (Path dev : list(dir)) {
      String name = dev.getFileName().toString();
      List<PortFacts> ports = new ArrayList<>();
      for (Path port : list(dev.resolve("ports"))) {
        Integer number = parseIntOrNull(port.getFileName().toString());
        if (number != null) {
          ports.add(port(number, port));
        }
      }
      ports.sort((a, b) -> Integer.compare(a.number(), b.number()));
      out.add(new DeviceFacts(name, provider(name, dev), ports));
    }
    out.sort((a, b) -> a.name().compareTo(b.name()));
    return out;
  }

  private PortFacts port(int number, Path port) {
    List<GidEntry> gids = new ArrayList<>();
    for (Path gidFile : list(port.resolve("gids"))) {
      Integer index = parseIntOrNull(gidFile.getFileName().toString());
      String gid = read(gidFile);
      if (index == null || gid.isEmpty() || ZERO_GID.equals(gid)) {
        continue;
      }
      // an unpopulated entry's attributes read as EINVAL on a real kernel: empty here
      String type = read(port.resolve("gid_attrs/types/" + index));
      String ndev = read(port.resolve("gid_attrs/ndevs/" + index));
      gids.add(new GidEntry(index, gid, type, ndev));
    }
    gids.sort((a, b) -> Integer.compare(a.index(), b.index()));
    String netdev = "";
    for (GidEntry g : gids) {
      if (!g.netdev().isEmpty()) {
        netdev = g.netdev();
        break;
      }
    }
    int mtu = -1;
    if (!netdev.isEmpty()) {
      Integer parsed = parseIntOrNull(read(root.resolve("class/net/" + netdev + "/mtu")));
      mtu = parsed == null ? -1 : parsed;
    }
    return new PortFacts(
        number,
        read(port.resolve("link_layer")),
        stateWord(read(port.resolve("state"))),
        stateWord(read(port.resolve("phys_state"))),
        netdev,
        mtu,
        gids);
  }

  /** {@code "4: ACTIVE"} → {@code "ACTIVE"}. */
  static String stateWord(String raw) {
    int colon = raw.indexOf(':');
    return (colon < 0 ? raw : raw.substring(colon + 1)).trim();
  }

  private static String provider(String name, Path dev) {
    Path driver = dev.resolve("device/driver");
    try {
      if (Files.isSymbolicLink(driver)) {
        Path target = Files.readSymbolicLink(driver).getFileName();
        if (target != null) {
          return target.toString();
        }
      }
    } catch (IOException e) {
      // fall through to the name
    }
    String n = name.toLowerCase(Locale.ROOT);
    if (n.startsWith("rxe")) {
      return "rdma_rxe (Soft-RoCE)";
    }
    if (n.startsWith("siw")) {
      return "siw (Soft-iWARP)";
    }
    if (n.startsWith("mlx5")) {
      return "mlx5_ib";
    }
    if (n.startsWith("mlx4")) {
      return "mlx4_ib";
    }
    if (n.startsWith("irdma")) {
      return "irdma";
    }
    if (n.startsWith("bnxt_re")) {
      return "bnxt_re";
    }
    if (n.startsWith("efa")) {
      return "efa";
    }
    return "unknown driver";
  }

  /** The trimmed first line of a file; empty when it is missing or unreadable. */
  static String read(Path file) {
    try {
      String s = Files.readString(file, StandardCharsets.UTF_8);
      int nl = s.indexOf('\n');
      return (nl < 0 ? s : s.substring(0, nl)).trim();
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  /** The entries of a folder, sorted; empty when it is missing or unreadable. */
  static List<Path> list(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.sorted().toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  static Integer parseIntOrNull(String s) {
    try {
      return Integer.valueOf(s.trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
