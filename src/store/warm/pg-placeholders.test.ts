import { describe, expect, it } from 'vitest';
import { translatePlaceholders as t } from './pg-placeholders.js';

describe('translatePlaceholders', () => {
  it('numbers placeholders in order', () => {
    expect(t('SELECT * FROM t WHERE a = ? AND b IN (?, ?)')).toEqual({ text: 'SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)', count: 3 });
    expect(t('INSERT INTO t VALUES (?,?)')).toEqual({ text: 'INSERT INTO t VALUES ($1,$2)', count: 2 });
    expect(t('SELECT 1')).toEqual({ text: 'SELECT 1', count: 0 });
    expect(t('')).toEqual({ text: '', count: 0 });
  });

  it('leaves string literals alone, with doubled quotes and E-string escapes', () => {
    expect(t("SELECT '?', ? , 'it''s ?' || ?")).toEqual({ text: "SELECT '?', $1 , 'it''s ?' || $2", count: 2 });
    expect(t("SELECT E'\\'?', ?")).toEqual({ text: "SELECT E'\\'?', $1", count: 1 });
    expect(t("SELECT e'a\\\\', ?")).toEqual({ text: "SELECT e'a\\\\', $1", count: 1 });
    // a plain literal ends at the first lone quote, backslash or not (standard_conforming_strings)
    expect(t("SELECT 'a\\', ?")).toEqual({ text: "SELECT 'a\\', $1", count: 1 });
    // "type'…'" is not an E-string: the E ends a longer word
    expect(t("SELECT type'\\', ?")).toEqual({ text: "SELECT type'\\', $1", count: 1 });
    expect(t("SELECT U&'d\\0061t?', ?")).toEqual({ text: "SELECT U&'d\\0061t?', $1", count: 1 });
  });

  it('leaves quoted identifiers alone', () => {
    expect(t('SELECT "what?" FROM "t""?" WHERE x = ?')).toEqual({ text: 'SELECT "what?" FROM "t""?" WHERE x = $1', count: 1 });
  });

  it('leaves dollar-quoted bodies alone but not $n or identifiers with $', () => {
    expect(t('SELECT $$ ? $$, ?')).toEqual({ text: 'SELECT $$ ? $$, $1', count: 1 });
    expect(t('DO $fn$ BEGIN PERFORM 1 WHERE x = ?; END $fn$; SELECT ?')).toEqual({
      text: 'DO $fn$ BEGIN PERFORM 1 WHERE x = ?; END $fn$; SELECT $1',
      count: 1,
    });
    expect(t('SELECT $a$ $b$ ? $a$, ?')).toEqual({ text: 'SELECT $a$ $b$ ? $a$, $1', count: 1 });
    expect(t('SELECT a$b, ? FROM t')).toEqual({ text: 'SELECT a$b, $1 FROM t', count: 1 });
    expect(t('SELECT $1, ?')).toEqual({ text: 'SELECT $1, $1', count: 1 });
  });

  it('leaves comments alone, including nested block comments', () => {
    expect(t('SELECT ? -- why?\n, ?')).toEqual({ text: 'SELECT $1 -- why?\n, $2', count: 2 });
    expect(t('SELECT /* a /* b ? */ c ? */ ?')).toEqual({ text: 'SELECT /* a /* b ? */ c ? */ $1', count: 1 });
    expect(t('SELECT a - ?, b / ?')).toEqual({ text: 'SELECT a - $1, b / $2', count: 2 });
  });

  it('leaves unterminated literals to the server', () => {
    expect(t("SELECT ?, 'open ?")).toEqual({ text: "SELECT $1, 'open ?", count: 1 });
    expect(t('SELECT ?, /* open ?')).toEqual({ text: 'SELECT $1, /* open ?', count: 1 });
    expect(t('SELECT ?, $x$ open ?')).toEqual({ text: 'SELECT $1, $x$ open ?', count: 1 });
  });

  it('handles non-ASCII text', () => {
    expect(t("SELECT '今天?' AS 标题, ? WHERE 名字 = ?")).toEqual({ text: "SELECT '今天?' AS 标题, $1 WHERE 名字 = $2", count: 2 });
  });
});
