"""Stream readers: one term per literal whatever its escapes, and one dictionary when asked for."""

from rdflib import Literal

from rsp_plugin.io.formats import read_tnt
from rsp_plugin.lars.syntax import parse_program
from rsp_plugin.core.rdfterms import term_key
from rsp_plugin.core.terms import Dictionary


def test_a_literal_has_one_id_whatever_escapes_it_was_written_with():
    terms = Dictionary()
    lines = [
        '1 <http://ex/a> <http://ex/name> "caf\\u00E9"@fr .',
        '2 <http://ex/a> <http://ex/name> "café"@fr .',
        '3 <http://ex/a> <http://ex/note> "tab\\there \\"quoted\\""^^<http://www.w3.org/2001/XMLSchema#string> .',
    ]
    first, second, third = (element.fact[1][2] for element in read_tnt(lines, terms))
    assert first == second == terms.find(term_key(Literal("café", lang="fr")))
    assert terms.key(third) == term_key(Literal('tab\there "quoted"'))


def test_a_program_interns_into_the_dictionary_it_is_given_even_an_empty_one():
    terms = Dictionary()
    program = parse_program("q(X) :- p(X) .", terms=terms)
    assert program.terms is terms and terms.find("q") is not None


def test_a_comment_after_the_dot_reads_alike_with_or_without_the_newline():
    """N-Triples allows a comment after a triple's dot: a line handed over with its newline (a text
    file, the block reader's slow lines) reads as the same line without it."""
    from rsp_plugin.io.formats import read_tnt
    from rsp_plugin.core.terms import Dictionary

    for line in ("5 <a:s> <a:p> <a:o> . # seen", "5 <a:s>  <a:p> <a:o> .   # seen  "):
        with_newline = list(read_tnt([line + "\n"], Dictionary(), filename="f"))
        without = list(read_tnt([line], Dictionary(), filename="f"))
        assert [e.time_point for e in with_newline] == [e.time_point for e in without] == [5]
