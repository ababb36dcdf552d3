package skyjo.bot;

/**
 * How long a seat may think and how many faults it may make in one game; 0 means no limit (decisionMs, bankMs),
 * never (maxStrikes) or no grace (graceMs).
 *
 * @param decisionMs the limit for one decision, in milliseconds
 * @param bankMs a bank for the whole game every decision's time is taken from, in milliseconds
 * @param maxStrikes strikes (timeouts, illegal or malformed answers) before the seat forfeits
 * @param graceMs how long a disconnected seat may stay away before it forfeits, in milliseconds
 */
public record TimeControl(long decisionMs, long bankMs, int maxStrikes, long graceMs) {}
