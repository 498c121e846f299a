/** Entry point of the console bundle. */
import { render } from 'preact';
import { App } from './app.js';
import './app.css';

render(<App />, document.getElementById('app')!);
