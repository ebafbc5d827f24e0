// One way to write a time ratio (rung/ratio_text.h): "×", an en dash between an
// interval's ends, three significant digits in sentences and whole figures from 100.
#include <gtest/gtest.h>

#include "rung/ratio_text.h"

namespace rung {
namespace {

TEST(RatioText, SentencesKeepThreeSignificantDigitsAndWholeFiguresFromAHundred) {
  EXPECT_EQ(ratio_text(0.7634), "0.763×");
  EXPECT_EQ(ratio_text(1.0), "1×");
  EXPECT_EQ(ratio_text(1.25), "1.25×");
  EXPECT_EQ(ratio_text(99.94), "99.9×");
  EXPECT_EQ(ratio_text(100.0), "100×");  // the bound: whole from here, never "1e+02"
  EXPECT_EQ(ratio_text(1000.0), "1000×");
  EXPECT_EQ(ratio_range_text(0.71, 0.8), "0.71–0.8×");
  EXPECT_EQ(ratio_range_text(0.525, 49.1), "0.525–49.1×");
}

TEST(RatioText, TableCellsKeepTwoDecimalsAndTheIntervalInBrackets) {
  EXPECT_EQ(ratio_cell(0.7634), "0.76×");
  EXPECT_EQ(ratio_cell(33.567, 0.525, 49.123), "33.57× [0.53–49.12]");
  EXPECT_EQ(ratio_cell(1.0, 1.0, 1.0), "1.00× [1.00–1.00]");
}

}  // namespace
}  // namespace rung
