// PEC sphere of radius 0.5 m (analytic TM/TE modes from spherical Bessel zeros).
// Regenerate with ./regenerate.sh.
SetFactory("OpenCASCADE");
DefineConstant[ r = {0.5, Name "radius (m)"}, lc = {0.09, Name "characteristic length (m)"} ];
Sphere(1) = {0, 0, 0, r};
Physical Volume("vacuum", 1) = {1};
Physical Surface("pec", 2) = {1};
Mesh.CharacteristicLengthMin = lc;
Mesh.CharacteristicLengthMax = lc;
Mesh.CharacteristicLengthFromCurvature = 0;
Mesh.Algorithm3D = 1;
Mesh.RandomSeed = 1;
