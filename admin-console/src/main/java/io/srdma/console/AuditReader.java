package io.srdma.console;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Reads the audit log (the active file and its rotated {@code <file>.<12 digits>} siblings) for the
 * audit page: filters, pages, exports. Blocking; call from a worker thread. Reads whole files: the
 * log rotates at 64 MiB by default.
 */
final class AuditReader {
  private static final Pattern ROTATED = Pattern.compile("\\.[0-9]{12}");

  /** One line of the log, raw and parsed. */
  record Entry(String raw, JsonObject json, Instant time) {}

  /**
   * What to keep; null fields match anything.
   *
   * @param from earliest time, inclusive
   * @param to latest time, exclusive
   * @param tenant exact tenant
   * @param action exact action token
   * @param outcome exact outcome token
   * @param text substring of the actor, peer, grant or detail (case-insensitive)
   */
  record Filter(
      Instant from, Instant to, String tenant, String action, String outcome, String text) {
    boolean matches(Entry e) {
      JsonObject j = e.json;
      if (from != null && (e.time == null || e.time.isBefore(from))) {
        return false;
      }
      if (to != null && (e.time == null || !e.time.isBefore(to))) {
        return false;
      }
      if (tenant != null && !tenant.equals(j.getValue("tenant"))) {
        return false;
      }
      if (action != null && !action.equals(j.getValue("action"))) {
        return false;
      }
      if (outcome != null && !outcome.equals(j.getValue("outcome"))) {
        return false;
      }
      if (text != null) {
        String t = text.toLowerCase(Locale.ROOT);
        for (String f : new String[] {"actor", "peer", "grant", "region", "detail", "reason"}) {
          Object v = j.getValue(f);
          if (v instanceof String s && s.toLowerCase(Locale.ROOT).contains(t)) {
            return true;
          }
        }
        return false;
      }
      return true;
    }
  }

  private final Path active;

  AuditReader(Path active) {
    this.active = active;
  }

  /** The log's files, oldest first (rotated by their first sequence number, then the active). */
  List<Path> files() {
    List<Path> out = new ArrayList<>();
    Path dir = active.toAbsolutePath().getParent();
    String name = active.getFileName().toString();
    if (dir != null && Files.isDirectory(dir)) {
      try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, name + ".*")) {
        for (Path p : ds) {
          if (ROTATED.matcher(p.getFileName().toString().substring(name.length())).matches()) {
            out.add(p);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    out.sort(Comparator.comparing(p -> p.getFileName().toString()));
    if (Files.exists(active)) {
      out.add(active);
    }
    return out;
  }

  /** Every line matching, oldest first. Lines that are not JSON are kept with an empty object. */
  List<Entry> read(Filter filter) {
    List<Entry> out = new ArrayList<>();
    for (Path f : files()) {
      String text;
      try {
        text = Files.readString(f, StandardCharsets.ISO_8859_1); // the log is ASCII
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      int start = 0;
      while (start < text.length()) {
        int end = text.indexOf('\n', start);
        if (end < 0) {
          break; // a line being written: not yet part of the log
        }
        String raw = text.substring(start, end);
        start = end + 1;
        Entry e = parse(raw);
        if (filter.matches(e)) {
          out.add(e);
        }
      }
    }
    return out;
  }

  private static Entry parse(String raw) {
    JsonObject j;
    try {
      j = new JsonObject(raw);
    } catch (DecodeException | ClassCastException e) {
      j = new JsonObject().put("detail", "not an audit record: " + raw);
    }
    Instant t = null;
    if (j.getValue("time") instanceof String s) {
      try {
        t = Instant.parse(s);
      } catch (DateTimeParseException e) {
        t = null;
      }
    }
    return new Entry(raw, j, t);
  }
}
