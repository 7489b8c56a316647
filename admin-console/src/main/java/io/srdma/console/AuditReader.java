package io.srdma.console;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
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
 * audit page: filters, pages, exports. Blocking; call from a worker thread.
 *
 * <p>It streams, whatever the log's size: a page ({@link #newest}) reads the files backwards from
 * the end and keeps only the entries it returns; an export ({@link #cursor}) reads forwards a batch
 * at a time. Either holds a block of {@value #BLOCK_BYTES} bytes and one line; a line over {@value
 * #MAX_LINE_BYTES} bytes (the host writes none: each field is cut to 1024 characters) is read as a
 * note saying so.
 */
final class AuditReader {
  private static final Pattern ROTATED = Pattern.compile("\\.[0-9]{12}");

  /** What one read of a file takes at a time. */
  static final int BLOCK_BYTES = 64 << 10;

  /** The longest line read as it is. */
  static final int MAX_LINE_BYTES = 1 << 20;

  /** A page of matching entries: how many match in all, and the ones asked for, newest first. */
  record Page(long total, List<Entry> items) {}

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
    /** Whether this filter keeps every line. */
    boolean keepsAll() {
      return from == null
          && to == null
          && tenant == null
          && action == null
          && outcome == null
          && text == null;
    }

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
  private final int blockBytes;

  AuditReader(Path active) {
    this(active, BLOCK_BYTES);
  }

  /** A reader taking {@code blockBytes} at a time (tests try small blocks). */
  AuditReader(Path active, int blockBytes) {
    this.active = active;
    this.blockBytes = blockBytes;
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

  /**
   * The matching entries from the {@code offset}-th newest on, at most {@code limit}, newest first,
   * and how many match in all. Reads every file from its end; keeps only the entries returned.
   * Lines that are not JSON are kept with a {@code detail} saying so.
   */
  Page newest(Filter filter, long offset, int limit) {
    List<Entry> items = new ArrayList<>(Math.min(limit, 64));
    boolean all = filter.keepsAll();
    long matched = 0;
    List<Path> files = files();
    for (int f = files.size() - 1; f >= 0; f--) {
      try (ReverseLines lines = new ReverseLines(files.get(f), blockBytes, MAX_LINE_BYTES)) {
        for (String raw = lines.previous(); raw != null; raw = lines.previous()) {
          boolean wanted = matched >= offset && items.size() < limit;
          if (all && !wanted) {
            matched++; // only counted: no need to parse it
            continue;
          }
          Entry e = parse(raw);
          if (filter.matches(e)) {
            if (wanted) {
              items.add(e);
            }
            matched++;
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return new Page(matched, items);
  }

  /** The matching lines, oldest first, a batch at a time: for an export of any size. */
  Cursor cursor(Filter filter) {
    return new Cursor(filter, files());
  }

  /** Matching lines of the log's files in order, read forwards as they are asked for. */
  final class Cursor implements AutoCloseable {
    private final Filter filter;
    private final List<Path> files;
    private int next;
    private ForwardLines lines;

    private Cursor(Filter filter, List<Path> files) {
      this.filter = filter;
      this.files = files;
    }

    /**
     * The next matching lines as they are in the log, each ending in a newline, about {@code
     * maxChars} of them (at least one line); null once every file is read.
     */
    String next(int maxChars) {
      StringBuilder b = new StringBuilder();
      try {
        while (b.length() < maxChars) {
          if (lines == null) {
            if (next == files.size()) {
              break;
            }
            lines = new ForwardLines(files.get(next++), blockBytes, MAX_LINE_BYTES);
          }
          String raw = lines.next();
          if (raw == null) {
            lines.close();
            lines = null;
          } else if (filter.keepsAll() || filter.matches(parse(raw))) {
            b.append(raw).append('\n');
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return b.length() == 0 ? null : b.toString();
    }

    /** Closes the file being read, if any; idempotent. */
    @Override
    public void close() {
      ForwardLines l = lines;
      lines = null;
      next = files.size();
      if (l != null) {
        try {
          l.close();
        } catch (IOException e) {
          // a read-only file: nothing is lost
        }
      }
    }
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
