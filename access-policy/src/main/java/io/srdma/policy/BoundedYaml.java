package io.srdma.policy;

import java.io.Reader;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.events.CollectionStartEvent;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.events.NodeEvent;
import org.snakeyaml.engine.v2.events.ScalarEvent;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.parser.Parser;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.ScannerImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;

/**
 * Composes one YAML document into nodes within hard limits, so that hostile text can neither
 * exhaust the stack or the heap nor smuggle characters that display misleadingly. Every YAML file
 * the project reads goes through here: policy files ({@link PolicyLoader}) and the {@code srdma
 * serve} configuration.
 *
 * <p>In order, each check done before the next stage sees the text:
 *
 * <ol>
 *   <li>code points: at most {@code maxCodePoints}; no control characters other than tab, line feed
 *       and carriage return (C0, DEL, C1), no unpaired surrogates, no non-characters
 *       (U+FDD0..U+FDEF, U+xxFFFE, U+xxFFFF), no byte-order mark after the start, no bidirectional
 *       embedding, override or isolate controls;
 *   <li>the event stream, read iteratively (the parser keeps explicit stacks): at most {@link
 *       #MAX_DEPTH} nested mappings and lists, at most {@link #MAX_NODES} nodes (or a given
 *       number), no anchors, no aliases (so an alias bomb is never expanded), no explicit tags, and
 *       no scalar, key or value, holding a character the first check refuses: a double-quoted
 *       scalar's escapes ({@code "\e"}, {@code "\x07"}, <code>"&#92;u202E"</code>) spell characters
 *       the raw text does not contain. Reading stops at the first limit, so a 1,500-deep {@code
 *       [[[...} is refused after 65 events;
 *   <li>only then are nodes composed, from the events already read (the composer recurses, but only
 *       {@link #MAX_DEPTH} deep).
 * </ol>
 *
 * <p>The byte size of a file is its reader's to check, before decoding. Thread-safe: stateless.
 */
public final class BoundedYaml {
  /** Deepest nesting of mappings and lists accepted; the root collection is depth 1. */
  public static final int MAX_DEPTH = 32;

  /**
   * Most nodes (scalars, mappings, lists) one document may hold by default: four times a policy of
   * 1,000 tenants with 10 roles each (the benchmark's), and well under what 8 MiB can spell.
   */
  public static final int MAX_NODES = 1_000_000;

  /**
   * One problem found, 1-based.
   *
   * @param line 1-based line
   * @param column 1-based column (in code points)
   * @param reason what is wrong, for people
   * @param limit whether it broke a limit meant for hostile input, as opposed to a plain syntax
   *     error
   */
  public record Problem(int line, int column, String reason, boolean limit) {
    /**
     * Keeps the reason printable: it may quote the text, and problems are printed to terminals and
     * logs, so a character that does not print as itself is stored as a backslash, {@code u} and
     * four hex digits.
     */
    public Problem {
      reason = reason == null ? null : Printable.escape(reason);
    }
  }

  /** The text was refused; nothing was composed. */
  public static final class RejectedException extends Exception {
    private static final long serialVersionUID = 1L;

    @SuppressWarnings("serial") // immutable list of records
    private final List<Problem> problems;

    RejectedException(List<Problem> problems) {
      super(
          problems.get(0).line()
              + ":"
              + problems.get(0).column()
              + ": "
              + problems.get(0).reason());
      this.problems = List.copyOf(problems);
    }

    /** Every problem found, at least one, in the order found. */
    public List<Problem> problems() {
      return problems;
    }

    /** Whether any problem broke a hostile-input limit (rather than being a syntax error). */
    public boolean limitExceeded() {
      return problems.stream().anyMatch(Problem::limit);
    }
  }

  private BoundedYaml() {}

  /**
   * Checks and composes one document.
   *
   * @param label the file name used by the parser
   * @param text the decoded text
   * @param maxCodePoints the most code points accepted, positive
   * @return the root node, or null if the document is empty
   * @throws RejectedException listing what is wrong
   */
  public static Node compose(String label, String text, int maxCodePoints)
      throws RejectedException {
    return compose(label, text, maxCodePoints, MAX_NODES);
  }

  /**
   * Checks and composes one document.
   *
   * @param label the file name used by the parser
   * @param text the decoded text
   * @param maxCodePoints the most code points accepted, positive
   * @param maxNodes the most nodes accepted, positive
   * @return the root node, or null if the document is empty
   * @throws RejectedException listing what is wrong
   */
  public static Node compose(String label, String text, int maxCodePoints, int maxNodes)
      throws RejectedException {
    if (maxCodePoints <= 0 || maxNodes <= 0) {
      throw new IllegalArgumentException(
          "limits must be positive: " + maxCodePoints + " code points, " + maxNodes + " nodes");
    }
    Problem bad = checkCodePoints(text, maxCodePoints);
    if (bad != null) {
      throw new RejectedException(List.of(bad));
    }
    LoadSettings settings =
        LoadSettings.builder()
            .setLabel(label)
            .setUseMarks(true)
            .setAllowDuplicateKeys(false)
            .setAllowRecursiveKeys(false)
            .setMaxAliasesForCollections(0)
            // our own count above is the one that speaks; this is a second fence
            .setCodePointLimit(
                maxCodePoints < Integer.MAX_VALUE - 16 ? maxCodePoints + 16 : maxCodePoints)
            .build();
    List<Problem> problems = new ArrayList<>();
    List<Event> events = new ArrayList<>();
    try {
      Parser parser =
          new ParserImpl(
              settings,
              new ScannerImpl(settings, new StreamReader(settings, new PairKeepingReader(text))));
      int depth = 0;
      int nodes = 0;
      // the open collections, innermost first, to tell a mapping's keys from its values
      ArrayDeque<Collection> open = new ArrayDeque<>();
      while (parser.hasNext()) {
        Event e = parser.next();
        switch (e.getEventId()) {
          case Alias -> {
            problems.add(at(e, "aliases are not allowed", true));
            Collection parent = open.peek();
            if (parent != null) {
              parent.place(null);
            }
          }
          case SequenceStart, MappingStart, Scalar -> {
            if (++nodes > maxNodes) {
              problems.add(at(e, "more than " + maxNodes + " nodes", true));
              throw new RejectedException(problems);
            }
            if (e.getEventId() != Event.ID.Scalar && ++depth > MAX_DEPTH) {
              problems.add(
                  at(e, "nested more than " + MAX_DEPTH + " mappings or lists deep", true));
              throw new RejectedException(problems);
            }
            if (((NodeEvent) e).getAnchor().isPresent()) {
              problems.add(at(e, "anchors are not allowed", true));
            }
            if (tagged(e)) {
              problems.add(at(e, "explicit tags are not allowed", true));
            }
            Collection parent = open.peek();
            String where = parent == null ? "in the document" : parent.where();
            String value = e instanceof ScalarEvent s ? s.getValue() : null;
            if (value != null) {
              String refused = checkScalar(value);
              if (refused != null) {
                problems.add(at(e, refused + " " + where + " (written as an escape)", true));
                throw new RejectedException(problems);
              }
            }
            if (parent != null) {
              parent.place(value);
            }
            if (value == null) {
              open.push(new Collection(e.getEventId() == Event.ID.MappingStart));
            }
          }
          case SequenceEnd, MappingEnd -> {
            depth--;
            open.pop();
          }
          default -> {
            // stream and document boundaries
          }
        }
        events.add(e);
      }
      if (!problems.isEmpty()) {
        throw new RejectedException(problems);
      }
      return new Composer(settings, new Replay(events)).getSingleNode().orElse(null);
    } catch (MarkedYamlEngineException e) {
      Mark m = e.getProblemMark().orElse(e.getContextMark().orElse(null));
      String problem = e.getProblem() == null ? e.getContext() : e.getProblem();
      problems.add(at(m, "YAML syntax: " + problem, false));
      throw new RejectedException(problems);
    } catch (YamlEngineException e) {
      problems.add(new Problem(1, 1, "YAML: " + e.getMessage(), false));
      throw new RejectedException(problems);
    }
  }

  private static boolean tagged(Event e) {
    if (e instanceof ScalarEvent s) {
      return s.getTag().isPresent();
    }
    return e instanceof CollectionStartEvent c && c.getTag().isPresent();
  }

  /**
   * Why a parsed scalar is refused, {@code character U+XXXX (why) is not allowed}, or null if every
   * character in it is one the raw text may hold. Names the code point, never echoes it.
   */
  static String checkScalar(String value) {
    for (int i = 0; i < value.length(); ) {
      int cp = value.codePointAt(i);
      // inside a scalar a byte-order mark is never at the start of the text
      String why = forbidden(cp, 1);
      if (why != null) {
        return notAllowed(cp, why);
      }
      i += Character.charCount(cp);
    }
    return null;
  }

  private static String notAllowed(int cp, String why) {
    return String.format("character U+%04X (%s) is not allowed", cp, why);
  }

  /**
   * The first code point that is not allowed, or the one past the limit; null if the text is clean.
   */
  static Problem checkCodePoints(String text, int maxCodePoints) {
    int line = 1;
    int column = 1;
    int count = 0;
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      if (++count > maxCodePoints) {
        return new Problem(line, column, "more than " + maxCodePoints + " characters", true);
      }
      String why = forbidden(cp, i);
      if (why != null) {
        return new Problem(line, column, notAllowed(cp, why), true);
      }
      i += Character.charCount(cp);
      if (cp == '\n' || (cp == '\r' && (i >= text.length() || text.charAt(i) != '\n'))) {
        line++;
        column = 1;
      } else {
        column++;
      }
    }
    return null;
  }

  private static String forbidden(int cp, int index) {
    if (cp == '\t' || cp == '\n' || cp == '\r') {
      return null;
    }
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
      return "a control character";
    }
    if (cp <= 0xFFFF && Character.isSurrogate((char) cp)) {
      return "an unpaired surrogate";
    }
    if ((cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) {
      return "a non-character";
    }
    if (cp == 0xFEFF && index > 0) {
      return "a byte-order mark after the start";
    }
    if (cp == 0x061C || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) {
      return "a bidirectional control";
    }
    return null;
  }

  private static Problem at(Event e, String reason, boolean limit) {
    return at(e.getStartMark().orElse(null), reason, limit);
  }

  private static Problem at(Mark m, String reason, boolean limit) {
    return m == null
        ? new Problem(1, 1, reason, limit)
        : new Problem(m.getLine() + 1, m.getColumn() + 1, reason, limit);
  }

  /** An open mapping or list, as far as telling keys from values needs. */
  private static final class Collection {
    /** Longest key quoted in a reason; a longer one is cut. */
    private static final int MAX_KEY_CHARS = 64;

    private final boolean mapping;
    private int children;
    private String key;

    Collection(boolean mapping) {
      this.mapping = mapping;
    }

    /** Where the next node placed here stands, for a reason. */
    String where() {
      if (!mapping) {
        return "in a list item";
      }
      if (children % 2 == 0) {
        return "in a key";
      }
      if (key == null) {
        return "in a value";
      }
      if (key.length() <= MAX_KEY_CHARS) {
        return "in the value of '" + key + "'";
      }
      int end =
          Character.isHighSurrogate(key.charAt(MAX_KEY_CHARS - 1))
              ? MAX_KEY_CHARS - 1
              : MAX_KEY_CHARS;
      return "in the value of '" + key.substring(0, end) + "...'";
    }

    /** Counts the next node; {@code scalar} is its text if it is a scalar, else null. */
    void place(String scalar) {
      if (mapping && children % 2 == 0) {
        key = scalar;
      }
      children++;
    }
  }

  /**
   * Hands the text to snakeyaml-engine without ever ending a read on the first half of a surrogate
   * pair. Its StreamReader (2.10) fills its whole buffer and, when the last char is a high
   * surrogate, reads the low one past the buffer's end: an IndexOutOfBoundsException, not a syntax
   * error, for any text with an emoji astride a 1,025-char boundary (fixed upstream in 3.1.1).
   */
  private static final class PairKeepingReader extends Reader {
    private final String text;
    private int next;

    PairKeepingReader(String text) {
      this.text = text;
    }

    @Override
    public int read(char[] into, int offset, int length) {
      Objects.checkFromIndexSize(offset, length, into.length);
      if (length == 0) {
        return 0;
      }
      if (next >= text.length()) {
        return -1;
      }
      int end = Math.min(text.length(), next + length);
      if (end - next > 1 && Character.isHighSurrogate(text.charAt(end - 1))) {
        end--; // its low half comes with the next read
      }
      text.getChars(next, end, into, offset);
      int n = end - next;
      next = end;
      return n;
    }

    @Override
    public void close() {
      // nothing to release
    }
  }

  /** Hands already checked events to the composer, so the text is parsed once. */
  private static final class Replay implements Parser {
    private final List<Event> events;
    private int next;

    Replay(List<Event> events) {
      this.events = events;
    }

    @Override
    public boolean checkEvent(Event.ID choice) {
      return next < events.size() && events.get(next).getEventId() == choice;
    }

    @Override
    public Event peekEvent() {
      if (next >= events.size()) {
        throw new NoSuchElementException("no more events");
      }
      return events.get(next);
    }

    @Override
    public Event next() {
      Event e = peekEvent();
      next++;
      return e;
    }

    @Override
    public boolean hasNext() {
      return next < events.size();
    }
  }
}
