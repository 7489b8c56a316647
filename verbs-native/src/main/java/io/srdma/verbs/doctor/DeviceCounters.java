package io.srdma.verbs.doctor;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Reads the port counters and hardware counters of RDMA devices from sysfs, each time {@link
 * #read()} is called (nothing is cached and no thread is started): {@code <root>/class/infiniband/
 * <device>/ports/<n>/counters/*} and {@code .../hw_counters/*}. What cannot be read is left out,
 * never reported as an error: a missing folder, a file that cannot be read, a value that is not a
 * decimal number (a port without a performance-management agent reads {@code N/A (no PMA)}), a name
 * that is not a plain identifier. {@code hw_counters/lifespan} is left out too: it is the driver's
 * caching period in milliseconds, not a counter.
 *
 * <p>Thread-safe: instances are immutable; concurrent {@link #read()}s each read the files.
 */
public final class DeviceCounters {
  /** System property naming the sysfs root {@link #of(String)} reads. */
  public static final String SYSFS_PROP_NAME = "srdma.sysfs";

  /** The sysfs root when {@value #SYSFS_PROP_NAME} is not set. */
  public static final String SYSFS_DEFAULT = "/sys";

  /** At most this many counters per folder, so that a strange tree cannot grow a scrape. */
  static final int MAX_PER_FOLDER = 512;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
  private static final Pattern DECIMAL = Pattern.compile("[0-9]{1,20}");

  private final Path root;
  private final String device;

  /**
   * Reads below {@code sysfsRoot}.
   *
   * @param sysfsRoot the sysfs mount point, normally {@code /sys}
   * @param device one device's name (the one a host uses), or null for every device
   */
  public DeviceCounters(Path sysfsRoot, String device) {
    this.root = sysfsRoot;
    this.device = device;
  }

  /**
   * A reader of one device's counters below the sysfs root named by {@value #SYSFS_PROP_NAME}
   * (default {@value #SYSFS_DEFAULT}).
   *
   * @param device the device's name, e.g. {@code mlx5_0}
   */
  public static DeviceCounters of(String device) {
    return new DeviceCounters(Path.of(System.getProperty(SYSFS_PROP_NAME, SYSFS_DEFAULT)), device);
  }

  /** The sysfs root this reads. */
  public Path root() {
    return root;
  }

  /** The device this reads, or null for every device. */
  public String device() {
    return device;
  }

  /**
   * The counters now, sorted by device, port, group and name; empty when there is no such device
   * (or no RDMA at all). Never throws for what it finds on disk.
   */
  public List<DeviceCounter> read() {
    List<DeviceCounter> out = new ArrayList<>();
    for (Path dev : Sysfs.list(root.resolve("class/infiniband"))) {
      String name = dev.getFileName().toString();
      if (!NAME.matcher(name).matches() || (device != null && !device.equals(name))) {
        continue;
      }
      for (Path port : Sysfs.list(dev.resolve("ports"))) {
        Integer number = Sysfs.parseIntOrNull(port.getFileName().toString());
        if (number == null || number < 0) {
          continue;
        }
        folder(out, name, number, DeviceCounter.Group.PORT, port.resolve("counters"));
        folder(out, name, number, DeviceCounter.Group.HW, port.resolve("hw_counters"));
      }
    }
    out.sort(
        (a, b) -> {
          int c = a.device().compareTo(b.device());
          if (c == 0) {
            c = Integer.compare(a.port(), b.port());
          }
          if (c == 0) {
            c = a.group().compareTo(b.group());
          }
          return c != 0 ? c : a.name().compareTo(b.name());
        });
    return out;
  }

  private static void folder(
      List<DeviceCounter> out, String dev, int port, DeviceCounter.Group group, Path dir) {
    int taken = 0;
    for (Path file : Sysfs.list(dir)) {
      if (taken == MAX_PER_FOLDER) {
        return;
      }
      String name = file.getFileName().toString();
      if (!NAME.matcher(name).matches()
          || (group == DeviceCounter.Group.HW && name.equals("lifespan"))
          || !Files.isRegularFile(file)) {
        continue;
      }
      Long value = parse(Sysfs.read(file));
      if (value != null) {
        out.add(new DeviceCounter(dev, port, group, name, value));
        taken++;
      }
    }
  }

  /** An unsigned 64-bit decimal, or null when the text is anything else. */
  static Long parse(String text) {
    if (!DECIMAL.matcher(text).matches()) {
      return null;
    }
    try {
      return Long.parseUnsignedLong(text);
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
