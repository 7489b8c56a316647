package io.srdma.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.FileAppender;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/**
 * Where the {@code srdma} command's log lines go: quiet by default, loud on request.
 *
 * <p>Commands print results; logs are for whoever looks into a run afterwards. By default no log
 * line reaches the terminal. {@code --verbose} (or {@code --debug}) shows INFO and above on stderr;
 * {@code SRDMA_LOG_LEVEL=LEVEL} shows that level and above (and lowers the root level to it). A
 * command with a state directory (demo, serve) also writes every line at the root level to {@value
 * #FILE_NAME} there ({@link #toFile}). logback.xml routes its console appender through {@link
 * ConsoleFilter}. All methods are thread-safe.
 */
public final class CliLogging {
  /** The log file a command with a state directory writes. */
  public static final String FILE_NAME = "srdma.log";

  /** The environment variable that sets the log level (TRACE, DEBUG, INFO, WARN, ERROR, OFF). */
  public static final String LEVEL_ENV = "SRDMA_LOG_LEVEL";

  private static final String PATTERN = "%d{HH:mm:ss.SSS} %-5level [%thread] %logger{20} - %msg%n";

  /** The lowest level shown on the terminal; OFF (the default) shows none. */
  private static volatile Level console = terminalLevel(System.getenv(LEVEL_ENV), false);

  private CliLogging() {}

  /**
   * Sets what the terminal shows for the command about to run: the {@value #LEVEL_ENV} level when
   * set, else INFO with {@code verbose}, else nothing.
   */
  static void terminal(boolean verbose) {
    console = terminalLevel(System.getenv(LEVEL_ENV), verbose);
  }

  /** The level the terminal shows now (OFF: none). */
  static Level terminalLevel() {
    return console;
  }

  /**
   * What the terminal shows given {@value #LEVEL_ENV}'s value (null when unset) and {@code
   * --verbose}: the variable's level when it names one, else INFO when verbose, else nothing.
   */
  static Level terminalLevel(String env, boolean verbose) {
    Level otherwise = verbose ? Level.INFO : Level.OFF;
    if (env == null || env.isBlank()) {
      return otherwise;
    }
    return Level.toLevel(env.trim().toUpperCase(Locale.ROOT), otherwise);
  }

  /**
   * Starts writing every log line to {@code dir/}{@value #FILE_NAME} (appended, owner-only) until
   * the returned handle is closed. The directory must exist.
   *
   * @return the open log file; close it when the command ends
   */
  static LogFile toFile(Path dir) {
    Path file = dir.resolve(FILE_NAME).toAbsolutePath();
    try {
      if (!Files.exists(file)) {
        Files.createFile(
            file,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      }
    } catch (UnsupportedOperationException | java.io.IOException e) {
      // FileAppender below creates it (or reports why it cannot) with the umask's mode
    }
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(PATTERN);
    encoder.start();
    FileAppender<ILoggingEvent> appender = new FileAppender<>();
    appender.setContext(context);
    appender.setName("srdma-file-" + file);
    appender.setFile(file.toString());
    appender.setAppend(true);
    appender.setEncoder(encoder);
    appender.start();
    Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(appender);
    return new LogFile(file, root, appender);
  }

  /** A log file being written; closing it stops the writing. */
  static final class LogFile implements AutoCloseable {
    private final Path file;
    private final Logger root;
    private final FileAppender<ILoggingEvent> appender;

    private LogFile(Path file, Logger root, FileAppender<ILoggingEvent> appender) {
      this.file = file;
      this.root = root;
      this.appender = appender;
    }

    /** The file's path. */
    Path file() {
      return file;
    }

    @Override
    public void close() {
      root.detachAppender(appender);
      appender.stop();
    }
  }

  /**
   * logback's filter for the terminal appender: lets through what {@link #terminal} allows. Public
   * for logback.xml only.
   */
  public static final class ConsoleFilter extends Filter<ILoggingEvent> {
    @Override
    public FilterReply decide(ILoggingEvent event) {
      return event.getLevel().isGreaterOrEqual(console) ? FilterReply.NEUTRAL : FilterReply.DENY;
    }
  }
}
