// Package words says what the rules judged: it turns each verdict of package
// diagnose/rule into a finding people read (its title, detail and advice, with the
// environment to set) and into the numbers that prove it (the evidence map of the JSON
// contract memdoctor/diagnosis/v1, whose keys carry their units); each reason a rule could
// not judge into a sentence; and each note into a line.
//
// No judgment is made here: severity, confidence and every threshold are the rules'. The
// words only read the verdicts and the facts they stand on. One file per finding kind.
package words
