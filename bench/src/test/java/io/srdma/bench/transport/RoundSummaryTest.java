package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class RoundSummaryTest {
  private static final int SIZE = 1_000_000;

  /** A measured transport that delivered {@code mb} MB in one second. */
  private static Measurement measured(String transport, int mb) {
    ThroughputResult t = new ThroughputResult(SIZE, mb, mb, 1_000_000_000L, mb, 1, 0, 0, 0);
    return new Measurement(
        transport, SIZE, Measurement.OK, null, t, 10, 20, 30, 40, 100, mb / 100.0, mb / 1000.0);
  }

  @Test
  void shouldTakeEachRatioWithinItsRoundAndReportTheirMedianAndRange() {
    List<List<Measurement>> rounds =
        List.of(
            List.of(measured("sealed", 100), measured("tls-jdk", 50)), // 2.0
            List.of(measured("sealed", 300), measured("tls-jdk", 100)), // 3.0
            List.of(measured("sealed", 120), measured("tls-jdk", 200))); // 0.6
    List<RoundSummary.Row> rows = RoundSummary.rows(List.of(SIZE), rounds);
    assertEquals(2, rows.size());
    RoundSummary.Row sealed = rows.get(0);
    assertEquals("sealed", sealed.transport());
    assertEquals(3, sealed.roundsOk());
    assertEquals(new RoundSummary.Spread(120, 100, 300), sealed.mbps());
    // paired within rounds: median of 2.0, 3.0, 0.6; the ratio of the medians would be 1.2
    assertEquals(2.0, sealed.vsTls().median(), 1e-9);
    assertEquals(0.6, sealed.vsTls().min(), 1e-9);
    assertEquals(3.0, sealed.vsTls().max(), 1e-9);
    assertTrue(Double.isNaN(sealed.vsPlain().median()), "no plain-write in these rounds");
    assertEquals(1.0, rows.get(1).vsTls().median(), 1e-9);
    assertEquals(0.12, sealed.switchesPerMessage(), 1e-9, "median of 0.1, 0.3, 0.12");

    StringWriter out = new StringWriter();
    RoundSummary.print(new PrintWriter(out), List.of(SIZE), rows, 3);
    assertTrue(
        out.toString().contains("| sealed | 3 | 120.0 [100.0–300.0] | 1.20 | 0.120 |"),
        out.toString());
    assertTrue(out.toString().contains("2.00x [0.60x–3.00x]"), out.toString());
  }

  @Test
  void shouldLeaveOutRoundsInWhichATransportWasNotMeasured() {
    List<List<Measurement>> rounds =
        List.of(
            List.of(measured("sealed", 100), measured("tls-jdk", 100)),
            List.of(
                Measurement.notMeasured("sealed", SIZE, Measurement.FAILED, "broke"),
                measured("tls-jdk", 100)));
    RoundSummary.Row sealed = RoundSummary.rows(List.of(SIZE), rounds).get(0);
    assertEquals(1, sealed.roundsOk());
    assertEquals(new RoundSummary.Spread(100, 100, 100), sealed.mbps());
  }

  @Test
  void shouldTakeTheMiddleOfAnEvenCount() {
    assertEquals(2.5, RoundSummary.Spread.of(new double[] {4, 1, 3, 2}).median(), 1e-9);
    assertTrue(Double.isNaN(RoundSummary.Spread.of(new double[] {Double.NaN}).median()));
  }
}
