package io.srdma.verbs.doctor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Where libibverbs is installed and which version: the real file behind the soname {@code
 * libibverbs.so.1} ({@code libibverbs.so.1.14.50.0}: library ABI 1.14, from rdma-core 50).
 *
 * @param directory the folder holding it, or null when none was found
 * @param file the versioned file name, or empty
 */
public record Libibverbs(Path directory, String file) {
  /** Where distributions put it. */
  public static final List<Path> DEFAULT_DIRS =
      List.of(
          Path.of("/usr/lib/x86_64-linux-gnu"),
          Path.of("/usr/lib/aarch64-linux-gnu"),
          Path.of("/usr/lib64"),
          Path.of("/usr/lib"),
          Path.of("/lib/x86_64-linux-gnu"),
          Path.of("/lib64"),
          Path.of("/usr/local/lib"));

  private static final String SONAME = "libibverbs.so.1";

  /** Looks in {@code dirs}, in order; the first folder holding the soname wins. */
  public static Libibverbs find(List<Path> dirs) {
    for (Path dir : dirs) {
      if (!Files.exists(dir.resolve(SONAME))) {
        continue;
      }
      String best = SONAME;
      try (Stream<Path> s = Files.list(dir)) {
        for (Path p : (Iterable<Path>) s::iterator) {
          String n = p.getFileName().toString();
          if (n.startsWith(SONAME + ".") && n.length() > best.length()) {
            best = n;
          }
        }
      } catch (IOException e) {
        // keep the soname
      }
      return new Libibverbs(dir, best);
    }
    return new Libibverbs(null, "");
  }

  /** Whether it was found. */
  public boolean found() {
    return directory != null;
  }

  /** {@code "1.14.50.0"}, or empty when only the soname was seen. */
  public String version() {
    return file.length() > SONAME.length() ? file.substring(SONAME.length() - 1) : "";
  }

  /** The rdma-core release the version names (the third number), or empty. */
  public String rdmaCoreRelease() {
    String[] parts = version().split("\\.", -1);
    return parts.length >= 3 ? parts[2] : "";
  }
}
