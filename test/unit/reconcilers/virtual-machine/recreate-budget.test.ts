// The recreates a namespace may start per minute: a sliding window, per namespace.
import { describe, expect, it } from 'vitest';
import { RecreateBudgets } from '../../../../controller/reconcilers/virtual-machine/recreate-budget.js';

const at = (seconds: number): Date => new Date(Date.UTC(2026, 2, 1, 12, 0, seconds));

describe('recreates per namespace per minute', () => {
  it('allows `limit` in any minute, then says when the next one is allowed', () => {
    const budgets = new RecreateBudgets(2);
    budgets.take('team-a', at(0));
    expect(budgets.budget('team-a', at(10))).toEqual({ limit: 2, available: true });
    budgets.take('team-a', at(10));
    expect(budgets.budget('team-a', at(20))).toEqual({ limit: 2, available: false, nextAt: at(60) });
    expect(budgets.budget('team-a', at(60))).toEqual({ limit: 2, available: true });
    budgets.take('team-a', at(60));
    expect(budgets.budget('team-a', at(61))).toEqual({ limit: 2, available: false, nextAt: at(70) });
  });

  it('counts each namespace apart', () => {
    const budgets = new RecreateBudgets(1);
    budgets.take('team-a', at(0));
    expect(budgets.budget('team-a', at(1)).available).toBe(false);
    expect(budgets.budget('team-b', at(1)).available).toBe(true);
  });

  it('allows none with a limit of 0', () => {
    expect(new RecreateBudgets(0).budget('team-a', at(0)).available).toBe(false);
  });
});
