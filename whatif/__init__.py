"""What-if analysis on top of the diff records: sample histories, optimality gap, the HTML report."""
