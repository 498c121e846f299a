/** The sign-in form: paste an API key; a message says why you are here (rejected key, signed out). */
import { useState } from 'preact/hooks';
import { useI18n } from '../i18n.js';

export function SignIn({ message, onKey }: { message: string | null; onKey(key: string): void }) {
  const { t } = useI18n();
  const [key, setKey] = useState('');
  return (
    <main class="signin">
      <form
        class="card signin-card"
        onSubmit={(ev) => {
          ev.preventDefault();
          if (key.trim()) onKey(key.trim());
        }}
        data-testid="signin"
      >
        <h1>{t('signin.title')}</h1>
        {message && (
          <p class="note error" role="alert" data-testid="signin-message">
            {message}
          </p>
        )}
        <label>
          {t('signin.key')}
          <input type="password" autoComplete="off" spellcheck={false} value={key} onInput={(e) => setKey(e.currentTarget.value)} placeholder="ctxvm_…" data-testid="signin-key" required />
        </label>
        <button type="submit" class="btn primary" data-testid="signin-button">
          {t('signin.button')}
        </button>
        <p class="subtle">
          {/* `…` in the message marks a command */}
          {t('signin.hint')
            .split('`')
            .map((part, i) => (i % 2 ? <code key={i}>{part}</code> : part))}
        </p>
      </form>
    </main>
  );
}
