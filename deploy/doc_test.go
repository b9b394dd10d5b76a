// Package deploy_test checks the deployment files of deploy/: the
// container image's build (deploy/build-static, run exactly as the
// Containerfile runs it), the image's shape, and the systemd units
// (systemd-analyze verify, and their command lines against the binary's
// flags). The directory holds no Go code of flowrun's: it must not grow
// any; what a deployment runs is cmd/flowrun.
package deploy_test
