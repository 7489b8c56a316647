package io.srdma.cli.bench;

import io.srdma.bench.transport.LoadConfig;
import io.srdma.bench.transport.LoadResult;
import io.srdma.bench.transport.LoadRun;
import io.srdma.bench.transport.Report;
import io.srdma.channel.record.AeadSelection;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;

/** {@code srdma bench --load}: the headline, the {@link LoadRun}, its report and its JSON. */
final class LoadBench {
  private LoadBench() {}

  /** Runs {@code c}; 0 passed, 1 an unintended error or growth beyond the thresholds. */
  static int run(
      LoadConfig c,
      AeadSelection.Choice cipher,
      Path json,
      String command,
      PrintWriter out,
      PrintWriter err)
      throws Exception {
    BenchHeadline.printLoad(out, cipher);
    out.flush();
    Instant started = Instant.now();
    LoadResult r;
    try (LoadRun run = new LoadRun(c, err)) {
      r = run.run();
      // reported before closing: a failure to close (reported after) must not lose the figures
      LoadRun.print(out, r);
      if (json != null) {
        Files.writeString(
            json,
            Report.json(LoadResult.json(BenchJson.header(started, command, cipher, Map.of()), r)),
            StandardCharsets.UTF_8);
        err.println("bench: results written to " + json);
      }
    }
    return r.ok() ? 0 : 1;
  }
}
