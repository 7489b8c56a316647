package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit log's directory is flushed to disk after each file the log creates (the key, a new
 * active file) and after each rotation's rename: the files were forced, their names were not, so a
 * crash could lose a rotated file's name (the chain then looks cut, or a file vanished) or the new
 * active file with the durable lines forced into it. Watched through {@link
 * AuditFiles#afterDirectorySync}: which names the directory held at each flush. (No crash is
 * simulated.)
 */
class AuditDirectorySyncTest {
  @TempDir Path dir;

  /** The names in the log directory (lock files aside) at each flush of it, in order. */
  private final List<Set<String>> flushed = new CopyOnWriteArrayList<>();

  @BeforeEach
  void watch() {
    AuditFiles.afterDirectorySync =
        d -> {
          assertEquals(dir.toAbsolutePath(), d, "the log's own directory is flushed");
          try (Stream<Path> s = Files.list(d)) {
            flushed.add(
                s.map(p -> p.getFileName().toString())
                    .filter(n -> !n.endsWith(".lock"))
                    .collect(Collectors.toSet()));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        };
  }

  @AfterEach
  void unwatch() {
    AuditFiles.afterDirectorySync = null;
  }

  @Test
  void shouldFlushTheDirectoryAfterCreatingTheKeyAndTheLog() {
    Path f = dir.resolve("audit.log");
    AuditLog.open(f, AuditLog.DEFAULT_ROTATE_BYTES, AuditLogTest.CLOCK).close();
    assertEquals(List.of(Set.of("audit.key"), Set.of("audit.key", "audit.log")), flushed);
  }

  @Test
  void shouldFlushTheDirectoryAfterEachRotationRenameAndTheNewFile() throws Exception {
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(f, 1024, AuditLogTest.CLOCK)) {
      for (int i = 1; i <= 40; i++) {
        log.append(AuditLogTest.event(i));
      }
    }
    List<Path> segments;
    try (Stream<Path> s = Files.list(dir)) {
      segments =
          s.filter(p -> p.getFileName().toString().matches("audit\\.log\\.\\d{12}")).toList();
    }
    assertTrue(segments.size() > 3, segments.toString());
    // key, first log; then per rotation: renamed (no active file), new active file
    assertEquals(2 + 2 * segments.size(), flushed.size(), flushed.toString());
    for (int r = 0; r < segments.size(); r++) {
      Set<String> afterRename = flushed.get(2 + 2 * r);
      Set<String> afterCreate = flushed.get(3 + 2 * r);
      assertFalse(afterRename.contains("audit.log"), afterRename.toString());
      assertEquals(r + 1, afterRename.size() - 1, "rotated files at rename " + r + afterRename);
      assertTrue(afterCreate.contains("audit.log"), afterCreate.toString());
      assertTrue(afterCreate.containsAll(afterRename), afterCreate.toString());
    }
    assertTrue(
        flushed
            .get(flushed.size() - 1)
            .containsAll(segments.stream().map(p -> p.getFileName().toString()).toList()),
        "every rotated file's name was flushed");
  }
}
