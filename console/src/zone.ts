/**
 * The zone the times of one user's memory are shown in: the user's own (the API's memory state
 * says which), so the task board, the histories and the context preview agree with the prompt.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

/** The shown user's zone (IANA name or "+08:00"); undefined: the browser's. */
export const UserZone = createContext<string | undefined>(undefined);

/** The zone times are shown in here. */
export function useUserZone(): string | undefined {
  return useContext(UserZone);
}
