package io.srdma.verbs.doctor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds a fake {@code /sys}, {@code /proc} and library folder under a temporary directory. */
final class FakeHost {
  final Path sys;
  final Path proc;
  final Path lib;

  FakeHost(Path dir) {
    sys = dir.resolve("sys");
    proc = dir.resolve("proc");
    lib = dir.resolve("lib");
    memlock("unlimited", "0000000000000000");
  }

  FakeHost memlock(String softLimit, String capEff) {
    write(
        proc.resolve("self/limits"),
        "Limit                     Soft Limit           Hard Limit           Units\n"
            + "Max locked memory         "
            + softLimit
            + "              "
            + softLimit
            + "              bytes\n");
    write(proc.resolve("self/status"), "Name:\tjava\nCapEff:\t" + capEff + "\n");
    return this;
  }

  FakeHost libibverbs(String versionedName) {
    write(lib.resolve("libibverbs.so.1"), "");
    write(lib.resolve(versionedName), "");
    return this;
  }

  FakeHost netdev(String name, int mtu) {
    write(sys.resolve("class/net/" + name + "/mtu"), mtu + "\n");
    return this;
  }

  FakeHost port(String dev, int port, String linkLayer, String state, String physState) {
    Path p = portDir(dev, port);
    write(p.resolve("link_layer"), linkLayer + "\n");
    write(p.resolve("state"), state + "\n");
    write(p.resolve("phys_state"), physState + "\n");
    write(p.resolve("gids/9"), "0000:0000:0000:0000:0000:0000:0000:0000\n");
    return this;
  }

  FakeHost gid(String dev, int port, int index, String gid, String type, String ndev) {
    Path p = portDir(dev, port);
    write(p.resolve("gids/" + index), gid + "\n");
    write(p.resolve("gid_attrs/types/" + index), type + "\n");
    write(p.resolve("gid_attrs/ndevs/" + index), ndev + "\n");
    return this;
  }

  /**
   * rxe0 on lo as the Soft-RoCE guest showed it (kernel 6.1): three GIDs, all RoCE v2 (link-local,
   * IPv4-mapped 127.0.0.1, ::1), lo's MTU 65536.
   */
  FakeHost rxe0OnLo() {
    return netdev("lo", 65536)
        .port("rxe0", 1, "Ethernet", "4: ACTIVE", "5: LinkUp")
        .gid("rxe0", 1, 0, "fe80:0000:0000:0000:0200:00ff:fe00:0000", "RoCE v2", "lo")
        .gid("rxe0", 1, 1, "0000:0000:0000:0000:0000:ffff:7f00:0001", "RoCE v2", "lo")
        .gid("rxe0", 1, 2, "0000:0000:0000:0000:0000:0000:0000:0001", "RoCE v2", "lo");
  }

  private Path portDir(String dev, int port) {
    return sys.resolve("class/infiniband/" + dev + "/ports/" + port);
  }

  private static void write(Path file, String text) {
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
