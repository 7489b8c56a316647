package io.srdma.server;

import io.srdma.keys.BoundedFileOpen;
import io.srdma.policy.BoundedYaml;
import io.srdma.policy.Printable;
import io.srdma.policy.Units;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * The YAML side of {@link ServeConfig}: loads the file (size, UTF-8, {@link BoundedYaml}), reads
 * typed values (numbers, sizes, durations, names, paths, addresses) and collects every error as
 * {@code file:line:column: key: what is wrong}, in file order. Split from the sections it serves
 * ({@link ServeSections}) so that each file has one job.
 */
abstract class ConfigReader {
  /** The name of the threads that open the file. */
  static final String OPEN_THREAD_NAME = "srdma-config-open";

  /** For tests: runs after the file's check and before its open. Null in production. */
  static volatile Consumer<Path> beforeOpen;

  private static final BoundedFileOpen OPEN =
      new BoundedFileOpen(
          OPEN_THREAD_NAME, BoundedFileOpen.Refusals.worded(), () -> beforeOpen, () -> null);

  private static final int MAX_MESSAGE_CHARS = 300;
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
  private static final Pattern INTEGER = Pattern.compile("[0-9]{1,10}");

  /** The file read. */
  final Path file;

  /** The file as errors name it. */
  final String label;

  /** Where each key was written, for errors found after reading. */
  final Map<String, ServeConfig.At> positions = new LinkedHashMap<>();

  private final Path base;
  private final List<Located> errors = new ArrayList<>();

  private record Located(int line, int column, String text) {}

  record Entry(String key, Node keyNode, Node value) {}

  ConfigReader(Path file) {
    this.file = file;
    this.label = file.toString();
    Path parent = file.toAbsolutePath().getParent();
    this.base = parent == null ? Path.of("") : parent;
  }

  /** Every error so far, in file order; empty when there is none. */
  final List<String> errorsInFileOrder() {
    errors.sort((a, b) -> a.line != b.line ? Integer.compare(a.line, b.line) : a.column - b.column);
    List<String> out = new ArrayList<>();
    for (Located e : errors) {
      out.add(e.text);
    }
    return out;
  }

  /** Adds an error already worded {@code file:line:column: key: what} (the cluster section's). */
  final void addError(int line, int column, String text) {
    add(line, column, text);
  }

  // Every error goes through here: values (and keys, and the file name) are echoed in errors,
  // and a line feed, carriage return, tab or bidi control in one must not forge or hide a line
  // where the error is printed or logged.
  private void add(int line, int column, String text) {
    errors.add(new Located(line, column, Printable.escape(text)));
  }

  // values are echoed in messages; a hostile megabyte value must not become a megabyte line
  private static String clip(String text) {
    return text.length() > MAX_MESSAGE_CHARS ? text.substring(0, MAX_MESSAGE_CHARS) + "..." : text;
  }

  // ------------------------------------------------------------------ reading

  /**
   * The file's text, or null after an error. It is opened by {@link BoundedFileOpen}: a link is
   * followed (Kubernetes mounts a ConfigMap's files through links), but the target must be a
   * regular file, a FIFO there cannot hang the start (the open is given up), and a file swapped
   * between the check and the open is refused; at most {@link ServeConfig#MAX_FILE_BYTES} are read.
   */
  String load() {
    byte[] raw;
    try (FileChannel ch = OPEN.read(file, BoundedFileOpen.Links.FOLLOW, null);
        InputStream in = Channels.newInputStream(ch)) {
      raw = in.readNBytes((int) ServeConfig.MAX_FILE_BYTES + 1);
    } catch (NoSuchFileException e) {
      fileError("no such file (or not a regular file)");
      return null;
    } catch (BoundedFileOpen.Refused e) {
      fileError(e.getMessage());
      return null;
    } catch (IOException e) {
      fileError("cannot read: " + Addresses.explain(e));
      return null;
    }
    if (raw.length > ServeConfig.MAX_FILE_BYTES) {
      fileError("larger than " + ServeConfig.MAX_FILE_BYTES + " bytes; not a configuration file");
      return null;
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(raw))
          .toString();
    } catch (CharacterCodingException e) {
      fileError("not valid UTF-8");
      return null;
    }
  }

  // BoundedYaml refuses anchors, aliases, explicit tags, nesting and node counts beyond its
  // limits and bad characters before any node is built: hostile text gets one clear error.
  Node compose(String text) {
    try {
      Node root =
          BoundedYaml.compose(label, text, (int) ServeConfig.MAX_FILE_BYTES, ServeConfig.MAX_NODES);
      if (root == null) {
        fileError("the file is empty");
      }
      return root;
    } catch (BoundedYaml.RejectedException e) {
      for (BoundedYaml.Problem p : e.problems()) {
        String reason = p.reason();
        if (reason.startsWith("anchors") || reason.startsWith("aliases")) {
          reason += " in a serve configuration";
        }
        add(p.line(), p.column(), label + ":" + p.line() + ":" + p.column() + ": " + reason);
      }
      return null;
    }
  }

  // ------------------------------------------------------------------ values

  Map<String, Entry> fields(Node node, String where, List<String> allowed, List<String> required) {
    String what = where.isEmpty() ? "the configuration" : where;
    if (!(node instanceof MappingNode map)) {
      error(
          node,
          where.isEmpty() ? null : where,
          (where.isEmpty() ? "the configuration " : "") + "must be a mapping, got " + kind(node));
      return null;
    }
    Map<String, Entry> out = new LinkedHashMap<>();
    for (NodeTuple t : map.getValue()) {
      Node k = t.getKeyNode();
      if (!(k instanceof ScalarNode ks)) {
        error(k, where.isEmpty() ? null : where, "keys must be plain words");
        continue;
      }
      String name = ks.getValue();
      String full = where.isEmpty() ? name : where + "." + name;
      if (!allowed.contains(name)) {
        error(
            k,
            full,
            "unknown key '"
                + name
                + "' in "
                + what
                + " (expected one of "
                + String.join(", ", allowed)
                + ")");
        continue;
      }
      if (out.containsKey(name)) {
        error(k, full, "duplicate key '" + name + "' in " + what);
        continue;
      }
      positions.put(full, at(k.getStartMark().orElse(null), full));
      out.put(name, new Entry(name, k, t.getValueNode()));
    }
    for (String r : required) {
      if (!out.containsKey(r)) {
        error(node, where.isEmpty() ? r : where + "." + r, "missing required key '" + r + "'");
      }
    }
    return out;
  }

  String scalar(Entry e, String key) {
    if (!(e.value() instanceof ScalarNode s)) {
      error(e.value(), key, "must be a single value, got " + kind(e.value()));
      return null;
    }
    String v = s.getValue().trim();
    if (v.isEmpty() || (s.getTag().getValue().endsWith(":null") && isNullWord(v))) {
      error(e.value(), key, "has no value");
      return null;
    }
    return v;
  }

  // Numbers, sizes, durations and booleans are written plain: a quoted "8" is text, and text
  // where a number belongs is an error, as in any typed format.
  String plain(Entry e, String key, String expected) {
    String v = scalar(e, key);
    if (v != null && !((ScalarNode) e.value()).isPlain()) {
      error(
          e.value(),
          key,
          "must be " + expected + " written without quotes, got the text '" + v + "'");
      return null;
    }
    return v;
  }

  static boolean isNullWord(String v) {
    return v.equals("~") || v.equalsIgnoreCase("null");
  }

  Long integer(Entry e, String key, long min, long max) {
    String v = plain(e, key, "a whole number");
    if (v == null) {
      return null;
    }
    if (!INTEGER.matcher(v).matches() || Long.parseLong(v) < min || Long.parseLong(v) > max) {
      error(e.value(), key, "must be a whole number " + min + ".." + max + ", got '" + v + "'");
      return null;
    }
    return Long.parseLong(v);
  }

  int intOr(Entry e, String key, int min, int max, int fallback) {
    if (e == null) {
      return fallback;
    }
    Long n = integer(e, key, min, max);
    return n == null ? fallback : (int) (long) n;
  }

  Long size(Entry e, String key, long min, long max) {
    String v = plain(e, key, "a size");
    if (v == null) {
      return null;
    }
    OptionalLong n = Units.parseSize(v);
    if (n.isEmpty()) {
      error(e.value(), key, Units.sizeProblem(v));
      return null;
    }
    if (n.getAsLong() < min || n.getAsLong() > max) {
      error(
          e.value(),
          key,
          "must be "
              + Units.formatSize(min)
              + " to "
              + Units.formatSize(max)
              + ", got "
              + Units.formatSize(n.getAsLong()));
      return null;
    }
    return n.getAsLong();
  }

  Duration durationOr(Entry e, String key, Duration fallback) {
    if (e == null) {
      return fallback;
    }
    String v = plain(e, key, "a duration");
    if (v == null) {
      return fallback;
    }
    Duration d = Units.parseDuration(v);
    if (d == null) {
      error(
          e.value(),
          key,
          "must be a positive duration with a unit ms, s, m, h or d (e.g. 5s), got '" + v + "'");
      return fallback;
    }
    if (d.compareTo(Duration.ofDays(1)) > 0) {
      error(e.value(), key, "must be at most 1d, got '" + v + "'");
      return fallback;
    }
    return d;
  }

  boolean bool(Entry e, String key, boolean fallback) {
    String v = plain(e, key, "true or false");
    if (v == null) {
      return fallback;
    }
    if (!v.equals("true") && !v.equals("false")) {
      error(e.value(), key, "must be true or false, got '" + v + "'");
      return fallback;
    }
    return v.equals("true");
  }

  String choice(Entry e, String key, List<String> allowed, String fallback) {
    String v = scalar(e, key);
    if (v == null) {
      return fallback;
    }
    String lower = v.toLowerCase(Locale.ROOT);
    if (!allowed.contains(lower)) {
      error(e.value(), key, "must be one of " + String.join(", ", allowed) + ", got '" + v + "'");
      return fallback;
    }
    return lower;
  }

  String name(Entry e, String key) {
    if (e == null) {
      return null;
    }
    String v = scalar(e, key);
    if (v != null && !NAME.matcher(v).matches()) {
      error(
          e.value(),
          key,
          "must be a name of 1-63 characters a-z, 0-9, '_', '-' starting with a letter or digit,"
              + " got '"
              + v
              + "'");
      return null;
    }
    return v;
  }

  Path path(Entry e, String key, Path fallback) {
    if (e == null) {
      return fallback;
    }
    String v = scalar(e, key);
    if (v == null) {
      return fallback;
    }
    if (v.indexOf('\0') >= 0) {
      error(e.value(), key, "is not a usable path");
      return fallback;
    }
    try {
      Path p = Path.of(v);
      return p.isAbsolute() ? p : base.resolve(p).normalize();
    } catch (java.nio.file.InvalidPathException x) {
      error(e.value(), key, "is not a usable path: " + x.getReason());
      return fallback;
    }
  }

  InetSocketAddress address(Entry e, String key) {
    String v = scalar(e, key);
    if (v == null) {
      return null;
    }
    String host;
    String port;
    if (v.startsWith("[")) {
      int close = v.indexOf("]:");
      if (close < 0) {
        error(e.value(), key, "must be HOST:PORT or [IPv6]:PORT, got '" + v + "'");
        return null;
      }
      host = v.substring(1, close);
      port = v.substring(close + 2);
    } else {
      int colon = v.lastIndexOf(':');
      if (colon <= 0 || v.indexOf(':') != colon) {
        error(e.value(), key, "must be HOST:PORT (e.g. 0.0.0.0:7471, [::]:7471), got '" + v + "'");
        return null;
      }
      host = v.substring(0, colon);
      port = v.substring(colon + 1);
    }
    if (!INTEGER.matcher(port).matches() || Long.parseLong(port) > 65535) {
      error(e.value(), key, "port must be 0..65535 (0: any free port), got '" + port + "'");
      return null;
    }
    InetAddress address = resolve(host);
    if (address == null) {
      error(e.value(), key, "host '" + host + "' does not resolve");
      return null;
    }
    return new InetSocketAddress(address, Integer.parseInt(port));
  }

  static InetAddress resolve(String host) {
    if (host.isEmpty()) {
      return null;
    }
    try {
      return InetAddress.getByName(host);
    } catch (UnknownHostException | SecurityException e) {
      return null;
    }
  }

  static boolean isEmpty(Node node) {
    return node instanceof ScalarNode s && s.getValue().isEmpty();
  }

  static String kind(Node node) {
    if (node instanceof MappingNode) {
      return "a mapping";
    }
    if (node instanceof SequenceNode) {
      return "a list";
    }
    if (node instanceof ScalarNode s) {
      return s.getValue().isEmpty() ? "nothing" : "'" + s.getValue() + "'";
    }
    return "something else";
  }

  static ServeConfig.At at(Mark m, String key) {
    return m == null
        ? new ServeConfig.At(key, 1, 1)
        : new ServeConfig.At(key, m.getLine() + 1, m.getColumn() + 1);
  }

  void error(Node node, String key, String message) {
    error(node == null ? null : node.getStartMark().orElse(null), key, message);
  }

  void error(Mark m, String key, String message) {
    int line = m == null ? 0 : m.getLine() + 1;
    int column = m == null ? 0 : m.getColumn() + 1;
    String pos = m == null ? label : label + ":" + line + ":" + column;
    // an unknown key is echoed in its key too
    add(line, column, pos + ": " + (key == null ? "" : clip(key) + ": ") + clip(message));
  }

  void fileError(String message) {
    add(0, 0, label + ": " + message);
  }
}
