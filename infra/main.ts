// The cdk8s app behind `cdk8s synth` / `make synth`: the default install into dist/.
import { App } from 'cdk8s';
import { addInstallCharts } from './install/banlieue-install.js';

const app = new App();
addInstallCharts(app);
app.synth();
