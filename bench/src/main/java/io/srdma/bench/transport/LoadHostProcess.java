package io.srdma.bench.transport;

import io.srdma.host.HostStats;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.ObjLongConsumer;

/**
 * The host of {@code srdma bench --load --host-process}: a child JVM ({@link LoadHostMain}, same
 * Java and class path) driven by one-line commands, so that host and clients are each measured in
 * their own process, with their own descriptor limit.
 *
 * <p>The child never outlives the run: {@link #close} asks it to stop, then destroys it (and its
 * descendants) after bounded waits; a shutdown hook destroys it if the parent JVM exits first; and
 * the child closes its host and exits when its stdin ends, which also covers a parent killed
 * outright. Its stderr goes to a file ({@link #stderr}), named in every failure.
 *
 * <p>Thread safety: commands are serialized (one answer line each); the reader thread hands the
 * unasked opened-record counts to {@code opened}.
 */
final class LoadHostProcess implements LoadHost {
  private static final String EOF = "\u0000eof";
  private static final Duration READY_TIMEOUT = Duration.ofMinutes(2);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  private final Process process;
  private final Path stderr;
  private final PrintWriter commands;
  private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
  private final Thread reader;
  private final Thread hook;
  private final InetSocketAddress address;
  private volatile boolean closed;

  private LoadHostProcess(Process process, Path stderr, ObjLongConsumer<Integer> opened)
      throws IOException {
    this.process = process;
    this.stderr = stderr;
    this.commands =
        new PrintWriter(
            new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
    this.hook = new Thread(this::destroy, LoadRun.BENCH_THREAD + "host-process-hook");
    Runtime.getRuntime().addShutdownHook(hook);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.reader = new Thread(() -> read(in, opened), LoadRun.BENCH_THREAD + "host-process-reader");
    reader.setDaemon(true);
    reader.start();
    String ready = answer("ready", READY_TIMEOUT);
    String[] w = ready.split(" ");
    this.address = new InetSocketAddress(w[1], Integer.parseInt(w[2]));
  }

  /**
   * Starts the child with the run's directory ({@code ca/} and the host credential {@link
   * LoadHostMain#HOST_CRT} / {@link LoadHostMain#HOST_KEY} written there) and waits until its host
   * listens.
   *
   * @param opened called with a session's index and its records opened so far
   */
  static LoadHostProcess start(Path dir, LoadConfig c, Path stderr, ObjLongConsumer<Integer> opened)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      // the parent's heap and direct memory bounds; nothing else (no agents, no debug ports)
      if (a.startsWith("-Xmx") || a.startsWith("-Xms") || a.startsWith("-XX:MaxDirectMemorySize")) {
        cmd.add(a);
      }
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(LoadHostMain.class.getName());
    cmd.add(dir.toString());
    cmd.add(String.valueOf(c.sessions()));
    cmd.add(String.valueOf(c.tenants()));
    cmd.add(String.valueOf(c.grants()));
    cmd.add(String.valueOf(c.recordSize()));
    cmd.add(String.valueOf(c.window()));
    cmd.add(c.provider());
    cmd.add(String.valueOf(c.openerThreads()));
    Process p =
        new ProcessBuilder(cmd)
            .redirectError(ProcessBuilder.Redirect.to(stderr.toFile()))
            .redirectOutput(ProcessBuilder.Redirect.PIPE)
            .start();
    try {
      return new LoadHostProcess(p, stderr, opened);
    } catch (IOException | RuntimeException e) {
      kill(p);
      throw e;
    }
  }

  /** The child's process, for checks that it is gone. */
  ProcessHandle handle() {
    return process.toHandle();
  }

  Path stderr() {
    return stderr;
  }

  private void read(BufferedReader in, ObjLongConsumer<Integer> opened) {
    try {
      for (String line; (line = in.readLine()) != null; ) {
        if (line.startsWith("d ")) {
          for (String pair : line.substring(2).split(" ")) {
            int colon = pair.indexOf(':');
            opened.accept(
                Integer.parseInt(pair.substring(0, colon)),
                Long.parseLong(pair.substring(colon + 1)));
          }
        } else {
          answers.add(line);
        }
      }
    } catch (IOException | RuntimeException e) {
      // the child ended or wrote what is not understood: every waiting command fails
    }
    answers.add(EOF);
  }

  /** Sends a command and returns its answer, whose first word must be {@code expect}. */
  synchronized String call(String command, String expect, Duration timeout) {
    if (closed) {
      throw new IllegalStateException("load host process already stopped");
    }
    commands.print(command);
    commands.print('\n');
    commands.flush();
    if (commands.checkError()) {
      throw failure("cannot send '" + command + "'");
    }
    return answer(expect, timeout);
  }

  private String answer(String expect, Duration timeout) {
    String a;
    try {
      a = answers.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw failure("interrupted waiting for '" + expect + "'");
    }
    if (a == null) {
      throw failure("no '" + expect + "' within " + Report.duration(timeout));
    }
    if (EOF.equals(a)) {
      answers.add(EOF); // for the next caller too
      throw failure("ended before '" + expect + "'");
    }
    if (!a.equals(expect) && !a.startsWith(expect + " ")) {
      throw failure("answered '" + a + "' instead of '" + expect + "'");
    }
    return a;
  }

  private IllegalStateException failure(String what) {
    String exit = process.isAlive() ? "running" : "exit " + process.exitValue();
    return new IllegalStateException(
        "load host process (pid "
            + process.pid()
            + ", "
            + exit
            + ") "
            + what
            + "; its stderr: "
            + stderr
            + tail());
  }

  /** The last lines of the child's stderr, for a failure's message. */
  private String tail() {
    try {
      List<String> lines = Files.readAllLines(stderr, StandardCharsets.UTF_8);
      List<String> last = lines.subList(Math.max(0, lines.size() - 8), lines.size());
      return last.isEmpty() ? "" : "\n  " + String.join("\n  ", last);
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  @Override
  public InetSocketAddress address() {
    return address;
  }

  @Override
  public HostStats stats() {
    return parse(call("stats", "stats", LoadRun.STEP_TIMEOUT).substring("stats ".length()));
  }

  @Override
  public boolean revoke(long grantId, String actor) {
    return Boolean.parseBoolean(
        call("revoke " + grantId, "revoked", LoadRun.STEP_TIMEOUT).substring(8).trim());
  }

  /** The host process's memory, descriptors and threads (after a GC there). */
  Sample sample() {
    String[] w = call("sample", "sample", LoadRun.STEP_TIMEOUT).split(" ");
    return new Sample(
        new LoadSample(
            Long.parseLong(w[1]),
            Long.parseLong(w[2]),
            Long.parseLong(w[3]),
            Integer.parseInt(w[4])),
        Integer.parseInt(w[5]),
        Integer.parseInt(w[6]),
        Integer.parseInt(w[7]));
  }

  /** One sample of the host process: its whole-process figures and its threads attributed. */
  record Sample(LoadSample process, int hostThreads, int otherThreads, int benchThreads) {}

  /** Starts the handshake floor's server in the host process; its address. */
  InetSocketAddress floorStart() {
    String[] w = call("floor", "floor", LoadRun.STEP_TIMEOUT).split(" ");
    return new InetSocketAddress(address.getAddress(), Integer.parseInt(w[1]));
  }

  void floorStop() {
    call("floor-stop", "ok", LoadRun.STEP_TIMEOUT);
  }

  /** The host process's unintended errors by kind (the records' checks). */
  Map<String, Long> errors() {
    Map<String, Long> out = new TreeMap<>();
    String a = call("errors", "errors", LoadRun.STEP_TIMEOUT);
    for (String kv : a.substring("errors".length()).trim().split(" ")) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        out.put(kv.substring(0, eq), Long.parseLong(kv.substring(eq + 1)));
      }
    }
    return out;
  }

  /**
   * Stops the host (its close) and the process: asks, waits {@link #STOP_TIMEOUT} for the answer
   * and the exit, then destroys it. Never throws; idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    try {
      if (process.isAlive()) {
        call("stop", "stopped", STOP_TIMEOUT);
        process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (RuntimeException e) {
      System.err.println("load: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      closed = true;
      destroy();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // the JVM is shutting down: the hook runs (or ran) destroy as well
      }
    }
  }

  /** Whether the child exited with 0 after {@link #close}. */
  boolean stoppedCleanly() {
    return !process.isAlive() && process.exitValue() == 0;
  }

  private void destroy() {
    kill(process);
    try {
      process.getOutputStream().close();
    } catch (IOException ignored) {
      // gone
    }
  }

  /** Ends the process and its descendants: politely, then forcibly, each wait bounded. */
  static void kill(Process p) {
    List<ProcessHandle> all = new ArrayList<>();
    p.toHandle().descendants().forEach(all::add);
    all.add(p.toHandle());
    for (ProcessHandle h : all) {
      h.destroy();
    }
    for (ProcessHandle h : all) {
      try {
        h.onExit().get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        h.destroyForcibly();
      }
    }
    for (ProcessHandle h : all) {
      try {
        h.onExit().get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        System.err.println("load: process " + h.pid() + " did not end when killed");
      }
    }
  }

  /** A {@link HostStats} as its components in order, separated by spaces. */
  static String format(HostStats s) {
    StringBuilder b = new StringBuilder();
    try {
      for (RecordComponent c : HostStats.class.getRecordComponents()) {
        b.append(b.length() == 0 ? "" : " ").append(c.getAccessor().invoke(s));
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
    return b.toString();
  }

  /** The inverse of {@link #format}. */
  static HostStats parse(String line) {
    RecordComponent[] c = HostStats.class.getRecordComponents();
    String[] w = line.trim().split(" ");
    if (w.length != c.length) {
      throw new IllegalStateException("host stats of " + w.length + " fields, not " + c.length);
    }
    Object[] values = new Object[c.length];
    Class<?>[] types = new Class<?>[c.length];
    for (int i = 0; i < c.length; i++) {
      types[i] = c[i].getType();
      values[i] = types[i] == int.class ? (Object) Integer.parseInt(w[i]) : Long.parseLong(w[i]);
    }
    try {
      Constructor<HostStats> k = HostStats.class.getDeclaredConstructor(types);
      return k.newInstance(values);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
